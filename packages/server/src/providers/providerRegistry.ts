import type { ProviderAvailability } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { connect, type ProviderConnection } from './kinds/index.js';

export type DiscoveryStatus = 'pending' | 'ready' | 'unavailable';

/** `config`: from gatehouse.yaml (read-only in the console); `console`: created in the admin console. */
export type ProviderSource = 'config' | 'console';

export interface ProviderStatus {
  status: DiscoveryStatus;
  /** Why the last discovery failed (logged and shown to admins and on /readyz, never to end users). */
  lastError?: string | undefined;
  checkedAt?: number | undefined;
}

/** How a console provider came to be offered; null while it is hidden (providers/providerStore.ts). */
export type Publication = { at: number; how: 'test' | 'admin' | 'existing' } | null;

/** The last active check of whether a provider's IdP answers. */
export interface AvailabilityCheck {
  availability: ProviderAvailability;
  /** Why it does not (logged, on /readyz; never shown to end users). */
  error?: string | undefined;
  checkedAt: number;
}

export interface AvailabilityOptions {
  /** How long one check may take: an IdP that accepts connections but does not answer is unavailable after it. */
  timeoutMs: number;
  /** How long a check's answer is used before the next request checks again. */
  freshMs: number;
}

const DEFAULT_AVAILABILITY: AvailabilityOptions = { timeoutMs: 2_000, freshMs: 5_000 };

/** One provider as the registry holds it; replaced as a whole when its definition changes. */
interface Slot extends ProviderStatus {
  config: ProviderConfig;
  source: ProviderSource;
  /** Everything discovery depends on (the definition but `enabled`): a change means discovering anew. */
  fingerprint: string;
  /** The provider prepared by its kind's runtime (discovered, for OpenID Connect). */
  connection?: ProviderConnection | undefined;
  inflight?: Promise<ProviderConnection> | undefined;
  checked?: AvailabilityCheck | undefined;
  checking?: Promise<AvailabilityCheck> | undefined;
}

const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 60_000;

/**
 * Every provider and its discovered metadata: those in gatehouse.yaml and those created in the console
 * (replaced as a whole whenever they change, so a change counts from the next request on). Discovery
 * runs at start and retries in the background with backoff; a sign-in to a provider that is still down
 * retries once more on the spot and then answers `provider_unavailable`. One IdP being down never
 * blocks the others.
 *
 * Discovery state lives on each provider's slot, never by id: a slot replaced while its discovery is
 * in flight can finish, but what it found is never used for the new definition.
 */
export class ProviderRegistry {
  private slots = new Map<string, Slot>();
  private configProviders: readonly ProviderConfig[];
  private consoleProviders: readonly ProviderConfig[] = [];
  /**
   * How each console provider was published; null for one not published yet (no test sign-in passed):
   * offered to nobody, testable by admins. A console provider missing here counts as published.
   */
  private publications: ReadonlyMap<string, Publication> = new Map();
  private readonly timers = new Set<NodeJS.Timeout>();
  private started = false;
  private closed = false;

  constructor(
    configProviders: readonly ProviderConfig[],
    private readonly log: FastifyBaseLogger,
    /** Prepares a provider with its kind's runtime (providers/kinds/); replaced in unit tests. */
    private readonly discover: (provider: ProviderConfig) => Promise<ProviderConnection> = connect,
    private readonly availabilityOptions: AvailabilityOptions = DEFAULT_AVAILABILITY,
    private readonly now: () => number = Date.now,
  ) {
    this.configProviders = configProviders;
    for (const config of configProviders) this.slots.set(config.id, newSlot(config, 'config'));
  }

  /**
   * Replaces the console's providers. An unchanged definition keeps its prepared connection; a new
   * or changed one is discovered afresh; a removed or disabled one is no longer offered from the next
   * request on. Config providers win a clash (the console refuses clashes anyway).
   */
  setConsoleProviders(consoleProviders: readonly ProviderConfig[], publications: ReadonlyMap<string, Publication> = new Map()): void {
    this.stage(this.configProviders, consoleProviders, publications)();
  }

  /** Replaces the config file's providers (a reload), as `setConsoleProviders` does the console's. */
  setConfigProviders(configProviders: readonly ProviderConfig[]): void {
    this.stageConfigProviders(configProviders)();
  }

  /**
   * Prepares the config file's providers of a reload without changing anything yet: the returned
   * function puts them in force in one step, with whatever else the reload replaces.
   */
  stageConfigProviders(configProviders: readonly ProviderConfig[]): () => void {
    return this.stage(configProviders, this.consoleProviders, this.publications);
  }

  private stage(configProviders: readonly ProviderConfig[], consoleProviders: readonly ProviderConfig[], publications: ReadonlyMap<string, Publication>): () => void {
    const next = new Map<string, Slot>();
    const redefined: Array<[Slot, ProviderConfig]> = [];
    const ignored: string[] = [];
    const add = (config: ProviderConfig, source: ProviderSource) => {
      const previous = this.slots.get(config.id);
      if (previous?.source === source && previous.fingerprint === fingerprint(config)) {
        next.set(config.id, previous);
        redefined.push([previous, config]);
      } else next.set(config.id, newSlot(config, source));
    };
    for (const config of configProviders) add(config, 'config');
    for (const config of consoleProviders) {
      if (next.has(config.id)) ignored.push(config.id);
      else add(config, 'console');
    }
    return () => {
      for (const id of ignored) this.log.warn({ provider: id }, 'console provider ignored: gatehouse.yaml defines a provider with this id');
      for (const [slot, config] of redefined) slot.config = config;
      this.configProviders = configProviders;
      this.consoleProviders = consoleProviders;
      this.publications = publications;
      this.slots = next;
      if (this.started) for (const slot of next.values()) if (slot.config.enabled && !slot.connection) this.discoverInBackground(slot, RETRY_MIN_MS);
    };
  }

  /** Enabled, published providers, config ones first, each in its own order: what the sign-in page offers. */
  enabled(): ProviderConfig[] {
    return this.all().filter((config) => config.enabled && !this.hidden(config.id));
  }

  /** Every provider, enabled or not (the admin console). */
  all(): ProviderConfig[] {
    return [...this.slots.values()].map((slot) => slot.config);
  }

  /** An enabled, published provider: the only way sign-in, linking, refresh and logout find one. */
  get(id: string): ProviderConfig | undefined {
    const config = this.slots.get(id)?.config;
    return config?.enabled && !this.hidden(id) ? config : undefined;
  }

  /**
   * A console provider not published yet: nobody is offered it (sign-in page, account page, /readyz)
   * and it signs nobody in, until a test sign-in with it passed or an admin published it. Those in
   * gatehouse.yaml are never hidden.
   */
  hidden(id: string): boolean {
    return this.slots.get(id)?.source === 'console' && this.publications.get(id) === null;
  }

  /** How a console provider was published (null: hidden); undefined for one of gatehouse.yaml or unknown. */
  publication(id: string): Publication | undefined {
    return this.slots.get(id)?.source === 'console' ? this.publications.get(id) : undefined;
  }

  /** A provider whether or not it is enabled: for the admin console and its test sign-in only. */
  find(id: string): ProviderConfig | undefined {
    return this.slots.get(id)?.config;
  }

  source(id: string): ProviderSource | undefined {
    return this.slots.get(id)?.source;
  }

  /** A provider's display name, or its id when it no longer exists (for lists of past sessions). */
  name(id: string): string {
    return this.slots.get(id)?.config.name ?? id;
  }

  status(id: string): ProviderStatus | undefined {
    const slot = this.slots.get(id);
    return slot ? { status: slot.status, lastError: slot.lastError, checkedAt: slot.checkedAt } : undefined;
  }

  /**
   * The enabled providers' discovery status and whether each answers now (for /readyz): checked afresh
   * where the last check is older than a few seconds, all at once, each within the check's timeout.
   */
  async statuses(): Promise<Array<{ id: string; name: string; status: DiscoveryStatus; availability: ProviderAvailability; error?: string }>> {
    const slots = [...this.slots.values()].filter((slot) => slot.config.enabled && !this.hidden(slot.config.id));
    const checks = await Promise.all(slots.map((slot) => this.checkAvailability(slot)));
    return slots.map(({ config, status, lastError }, index) => {
      const { availability, error } = checks[index]!;
      const reason = availability === 'unavailable' ? (error ?? lastError) : lastError;
      return { id: config.id, name: config.name, status, availability, ...(reason ? { error: reason } : {}) };
    });
  }

  /**
   * Whether each of these providers' IdP answers now (the sign-in page greys out one that does not).
   * The page never waits on a check it need not: where a provider was checked before, its last answer
   * is given at once and, once it is a few seconds old, a fresh check starts in the background (so a
   * frozen IdP costs the page nothing); only a provider never checked yet is waited for, within the
   * check's timeout. Checks are shared: however many people load the page, an IdP is asked at most once
   * per few seconds.
   */
  async availability(ids: readonly string[]): Promise<Map<string, ProviderAvailability>> {
    const found = ids.flatMap((id) => {
      const slot = this.slots.get(id);
      return slot ? [[id, slot] as const] : [];
    });
    const checks = await Promise.all(
      found.map(([, slot]) => {
        const last = slot.checked;
        const next = this.checkAvailability(slot);
        return last ?? next;
      }),
    );
    return new Map(found.map(([id], index) => [id, checks[index]!.availability]));
  }

  /** Starts discovery of every enabled provider without waiting for it. */
  start(): void {
    this.started = true;
    for (const slot of this.slots.values()) if (slot.config.enabled) this.discoverInBackground(slot, RETRY_MIN_MS);
  }

  /** The prepared provider for a sign-in; throws provider_unavailable when the IdP cannot be reached. */
  async connection(id: string): Promise<ProviderConnection> {
    const slot = this.slots.get(id);
    if (!slot) throw new AppError('not_found');
    if (slot.connection) return slot.connection;
    try {
      return await this.discoverNow(slot);
    } catch (error) {
      throw new AppError('provider_unavailable', { params: { provider: slot.config.name }, cause: error });
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * One active check: the IdP prepared (discovered, when it never was) and asked again now (its JWKS or
   * discovery document, `probe`), within the timeout. Never the discovery made at start alone: an IdP
   * that stopped, or froze (accepting connections but not answering), reads unavailable.
   */
  private checkAvailability(slot: Slot): Promise<AvailabilityCheck> {
    if (slot.checked && this.now() - slot.checked.checkedAt < this.availabilityOptions.freshMs) return Promise.resolve(slot.checked);
    if (slot.checking) return slot.checking;
    const { timeoutMs } = this.availabilityOptions;
    const signal = AbortSignal.timeout(timeoutMs);
    const check = (async () => {
      const connection = slot.connection ?? (await untilAborted(this.discoverNow(slot), signal));
      await connection.probe?.(signal);
    })()
      .then(
        (): AvailabilityCheck => ({ availability: 'available', checkedAt: this.now() }),
        (error: unknown): AvailabilityCheck => ({
          availability: 'unavailable',
          error: signal.aborted ? `no answer within ${timeoutMs / 1000} s` : describe(error),
          checkedAt: this.now(),
        }),
      )
      .then((result) => {
        const id = slot.config.id;
        if (result.availability !== (slot.checked?.availability ?? 'available')) {
          if (result.availability === 'unavailable') this.log.warn({ provider: id, reason: result.error }, 'provider unavailable: its IdP does not answer');
          else this.log.info({ provider: id }, 'provider available again');
        }
        slot.checked = result;
        slot.checking = undefined;
        return result;
      });
    slot.checking = check;
    return check;
  }

  private discoverNow(slot: Slot): Promise<ProviderConnection> {
    if (slot.inflight) return slot.inflight;
    const id = slot.config.id;
    const attempt = this.discover(slot.config)
      .then((connection) => {
        Object.assign(slot, { connection, status: 'ready', lastError: undefined, checkedAt: Date.now() });
        this.log.info({ provider: id }, 'provider discovered');
        return connection;
      })
      .catch((error: unknown) => {
        Object.assign(slot, { status: 'unavailable', lastError: describe(error), checkedAt: Date.now() });
        this.log.warn({ provider: id, err: error }, 'provider discovery failed');
        throw error;
      })
      .finally(() => {
        slot.inflight = undefined;
      });
    slot.inflight = attempt;
    return attempt;
  }

  private discoverInBackground(slot: Slot, delay: number): void {
    this.discoverNow(slot).catch(() => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        // Retry only what is still current, enabled and undiscovered.
        if (this.slots.get(slot.config.id) === slot && slot.config.enabled && !slot.connection) {
          this.discoverInBackground(slot, Math.min(delay * 2, RETRY_MAX_MS));
        }
      }, delay);
      timer.unref();
      this.timers.add(timer);
    });
  }
}

function newSlot(config: ProviderConfig, source: ProviderSource): Slot {
  return { config, source, fingerprint: fingerprint(config), status: 'pending' };
}

function fingerprint(config: ProviderConfig): string {
  const { enabled: _enabled, ...definition } = config;
  return JSON.stringify(definition);
}

/** The promise, or a rejection once the signal aborts (what it waits for goes on by itself). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`.slice(0, 300);
}
