import type { FastifyBaseLogger } from 'fastify';
import type * as client from 'openid-client';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { discoverProvider } from './oidcClient.js';

export type DiscoveryStatus = 'pending' | 'ready' | 'unavailable';

export interface ProviderEntry {
  config: ProviderConfig;
  status: DiscoveryStatus;
  /** Why the last discovery failed (logged and shown on /readyz, never to end users). */
  lastError?: string | undefined;
  checkedAt?: number | undefined;
}

const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 60_000;

/**
 * All configured providers and their discovered metadata. Discovery runs at start and retries in the
 * background with backoff; a sign-in to a provider that is still down retries once more on the spot and
 * then answers `provider_unavailable`. One IdP being down never blocks the others.
 */
export class ProviderRegistry {
  private readonly entries = new Map<string, ProviderEntry>();
  private readonly configurations = new Map<string, client.Configuration>();
  private readonly inflight = new Map<string, Promise<client.Configuration>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    providers: readonly ProviderConfig[],
    private readonly log: FastifyBaseLogger,
    private readonly discover: (provider: ProviderConfig) => Promise<client.Configuration> = discoverProvider,
  ) {
    for (const config of providers) this.entries.set(config.id, { config, status: 'pending' });
  }

  /** Enabled providers, in configuration order. */
  enabled(): ProviderConfig[] {
    return [...this.entries.values()].filter((entry) => entry.config.enabled).map((entry) => entry.config);
  }

  get(id: string): ProviderConfig | undefined {
    const entry = this.entries.get(id);
    return entry?.config.enabled ? entry.config : undefined;
  }

  statuses(): Array<{ id: string; name: string; status: DiscoveryStatus; error?: string }> {
    return [...this.entries.values()]
      .filter((entry) => entry.config.enabled)
      .map(({ config, status, lastError }) => ({ id: config.id, name: config.name, status, ...(lastError ? { error: lastError } : {}) }));
  }

  /** Starts discovery of every enabled provider without waiting for it. */
  start(): void {
    for (const provider of this.enabled()) this.discoverInBackground(provider.id, RETRY_MIN_MS);
  }

  /** Discovered configuration for a sign-in; throws provider_unavailable when the IdP cannot be reached. */
  async configuration(id: string): Promise<client.Configuration> {
    const ready = this.configurations.get(id);
    if (ready) return ready;
    const entry = this.entries.get(id);
    if (!entry) throw new AppError('not_found');
    try {
      return await this.discoverNow(id);
    } catch (error) {
      throw new AppError('provider_unavailable', { params: { provider: entry.config.name }, cause: error });
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private discoverNow(id: string): Promise<client.Configuration> {
    const running = this.inflight.get(id);
    if (running) return running;
    const entry = this.entries.get(id)!;
    const attempt = this.discover(entry.config)
      .then((configuration) => {
        this.configurations.set(id, configuration);
        Object.assign(entry, { status: 'ready', lastError: undefined, checkedAt: Date.now() });
        this.log.info({ provider: id }, 'provider discovered');
        return configuration;
      })
      .catch((error: unknown) => {
        Object.assign(entry, { status: 'unavailable', lastError: describe(error), checkedAt: Date.now() });
        this.log.warn({ provider: id, err: error }, 'provider discovery failed');
        throw error;
      })
      .finally(() => this.inflight.delete(id));
    this.inflight.set(id, attempt);
    return attempt;
  }

  private discoverInBackground(id: string, delay: number): void {
    this.discoverNow(id).catch(() => {
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.configurations.has(id)) this.discoverInBackground(id, Math.min(delay * 2, RETRY_MAX_MS));
      }, delay);
      timer.unref();
      this.timers.add(timer);
    });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`.slice(0, 300);
}
