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
 * The configuration in force, replaced as a whole by a reload (config reload, SIGHUP or the console):
 * whoever reads `current` gets one whole configuration, the old or the new, never a mix. What was built
 * from it at start reads a section through `section()`, which follows the replacement.
 */
export class RunningConfig {
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

  /**
   * The configuration in force as one object that reads the current one at every access: what is built
   * once keeps it and still sees a reload (`config.admins` is the new admins after one).
   */
  readonly live: Config = follow(() => this.config);

  /**
   * A section as it is in force now, at every read: for what is built once and keeps a section (the
   * session store's timeouts, the admins of the user directory).
   */
  section<K extends keyof Config>(key: K): Config[K] {
    return follow(() => this.config[key]);
  }
}

/** A read-only object that is, at every access, whatever `current()` returns then. */
function follow<T>(current: () => T): T {
  const target = () => current() as object;
  return new Proxy({} as object, {
    get: (_empty, property) => Reflect.get(target(), property) as unknown,
    has: (_empty, property) => Reflect.has(target(), property),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_empty, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), property);
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
    set: () => false,
    deleteProperty: () => false,
    defineProperty: () => false,
  }) as T;
}
