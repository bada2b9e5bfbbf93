import { createRequire } from 'node:module';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';

/**
 * A rate limit is never off. Where a limit is counted somewhere shared — Redis (`cache.url`, across
 * nodes) or the node's primary process (`workers:`, across its workers) — this process counts every
 * request in its own memory too, with @fastify/rate-limit's own local store (the very windows a single
 * process uses). While the shared count answers, the larger of the two counts decides; when it fails
 * (down, hung, refused), the local count answers alone. So at worst each process counts on its own,
 * with what it has seen before the failure: an attacker who makes Redis or the primary fail gets no
 * fresh budget, and no request waits for the shared count past its deadline (500 ms).
 */

/** The local store's constructor: its counting rules, not the options object the plugin gives custom stores. */
type LocalStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => FastifyRateLimitStore;
/** The plugin's own counter (not exported by its entry point). */
export const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore') as LocalStoreCtor;

/** What the plugin's options say about counting past the limit (the local store's two rules). */
export interface CountingRule {
  continueExceeding?: unknown;
  exponentialBackoff?: unknown;
}

type Result = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Result) => void;

/**
 * `shared` with a local count beside it, as described above. `options` are the plugin's (or a route's)
 * counting rules, for the local count; `shared` may fail, this never does.
 */
export class WithLocalFallback implements FastifyRateLimitStore {
  private readonly local: FastifyRateLimitStore;

  constructor(
    private readonly shared: FastifyRateLimitStore,
    options: CountingRule,
  ) {
    this.local = new LocalStore(options.continueExceeding === true, options.exponentialBackoff === true);
  }

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    let here: Result | undefined;
    // The local store answers at once (synchronously); copied, as it keeps updating its own object.
    this.local.incr(
      key,
      (_error, result) => {
        if (result) here = { current: result.current, ttl: result.ttl };
      },
      timeWindow,
      max,
    );
    this.shared.incr(
      key,
      (error, shared) => {
        if (error || !shared) return callback(null, here ?? { current: 1, ttl: timeWindow });
        // Normally the shared count is the larger (it counts every process); the local one is larger
        // when the shared one lost its counts (Redis restarted empty), and then it decides.
        callback(null, here && here.current > shared.current ? here : shared);
      },
      timeWindow,
      max,
    );
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new WithLocalFallback(this.shared.child(routeOptions), routeOptions as CountingRule);
  }
}
