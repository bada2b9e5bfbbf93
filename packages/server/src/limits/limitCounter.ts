import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { LocalStore } from './limitFallback.js';

/**
 * Where this process's rate limits are counted: Redis (`cache.url`, limits/sharedLimits.ts) or the
 * node's primary (`workers:`, limits/clusterLimits.ts), each with this process's own count beside it
 * that decides when they fail (limits/limitFallback.ts). Undefined when this process counts alone.
 */
export interface CountedLimits {
  /** A store for @fastify/rate-limit whose keys go under `limit` (e.g. `sign-in`). */
  store(limit: string): FastifyRateLimitStoreCtor;
}

/** One more for `key` in a fixed window of `timeWindow` ms: the count so far and the ms left in the window. */
export type Count = (key: string, timeWindow: number, max: number) => Promise<{ current: number; ttl: number }>;

/**
 * A counter for a limit that is not a route's (the route's are @fastify/rate-limit's, which counts
 * every request itself): the caller says what to count, e.g. failures only. It counts exactly where
 * and as the routes' limits do — the same stores, keys under `limit`, fixed windows — and with the same
 * fallback, so it never fails: when Redis or the primary does not answer, this process's count answers.
 */
export function limitCounter(counted: CountedLimits | undefined, limit: string): Count {
  const store: FastifyRateLimitStore = counted ? new (counted.store(limit))({}) : new LocalStore(false, false);
  return (key, timeWindow, max) =>
    new Promise((resolve, reject) =>
      store.incr(
        key,
        // Copied: the local store keeps updating the object it answers with.
        (error, result) => (error || !result ? reject(error ?? new Error('not counted')) : resolve({ current: result.current, ttl: result.ttl })),
        timeWindow,
        max,
      ),
    );
}
