import type { ConfigState } from '@gatehouse/contract';
import type { Config } from './schema.js';

/** How the last reload went: applied, nothing to apply, or refused (the running configuration kept). */
export interface ReloadAttempt {
  at: number;
  outcome: 'applied' | 'unchanged' | 'refused';
  /** Why it was refused: one line per problem, as check-config says them. */
  problems?: string[] | undefined;
}

/**
 * Where a module reads settings a reload may change: `running.current.session`, read at each use, is
 * the configuration in force then. A module declares the part it reads
 * (`running: InForce<Pick<Config, 'admins'>>`); what keeps `running.current` (or a part of it) in a
 * variable keeps that configuration, not the next one.
 */
export interface InForce<T = Config> {
  readonly current: T;
}

/**
 * The configuration in force, replaced as a whole by a reload (config reload, SIGHUP or the console):
 * whoever reads `current` gets one whole configuration, the old or the new, never a mix. What is built
 * once and must follow a reload keeps this and reads `current` at each use (or a reader function made
 * of it, `() => running.current.session`), never a section taken out of it at start.
 */
export class RunningConfig implements InForce {
  private config: Config;
  private loaded: number;
  private attempt: ReloadAttempt | undefined;

  constructor(
    config: Config,
    /** The file it came from; undefined for the built-in defaults. */
    readonly file: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.config = config;
    this.loaded = now();
  }

  get current(): Config {
    return this.config;
  }

  /** When the configuration in force was read (at start, or by the last reload that applied one). */
  get loadedAt(): number {
    return this.loaded;
  }

  get lastReload(): ReloadAttempt | undefined {
    return this.attempt;
  }

  /** Puts `next` in force (it has been validated whole, and everything built from it is ready). */
  replace(next: Config): void {
    this.config = next;
    this.loaded = this.now();
    this.attempt = { at: this.loaded, outcome: 'applied' };
  }

  /** A reload found nothing to change. */
  unchanged(): void {
    this.attempt = { at: this.now(), outcome: 'unchanged' };
  }

  /** A reload was refused: the configuration in force stays, and says why until the next attempt. */
  refused(problems: string[]): void {
    this.attempt = { at: this.now(), outcome: 'refused', problems };
  }

  /** For /readyz and the console: the file, when it was read, how the last reload went. */
  report(): ConfigState {
    const iso = (time: number) => new Date(time).toISOString();
    const attempt = this.attempt;
    return {
      file: this.file ?? null,
      loadedAt: iso(this.loaded),
      lastReload: attempt ? { at: iso(attempt.at), outcome: attempt.outcome, ...(attempt.problems ? { problems: attempt.problems } : {}) } : null,
    };
  }
}
