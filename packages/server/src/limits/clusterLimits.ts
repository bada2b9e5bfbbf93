import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { AskFailed, question, type PrimaryChannel, type WorkersChannel } from '../cluster/channel.js';
import { LocalStore, WithLocalFallback, type CountingRule } from './limitFallback.js';

/**
 * Rate limits counted once per node under `workers:` when there is no Redis (`cache.url`): each worker
 * would otherwise count alone, and a node of eight workers would allow eight times the limit. The
 * workers ask their primary over the node's channel (cluster/channel.ts); the primary counts in @fastify/rate-limit's
 * own local store, so the windows and limits are exactly those of a single process. A primary that
 * does not answer within ANSWER_TIMEOUT leaves the worker's own count to decide (limits/limitFallback.ts:
 * the limit is never off, at worst each worker counts alone), logged at most once a minute.
 */

/** How long a worker waits for its primary's count before its own count decides. */
export const ANSWER_TIMEOUT = 500;
/** At most one warning a minute: a primary that does not answer fails every count. */
const WARNING_INTERVAL = 60_000;
/** Keys and windows come from the workers, which are ours; still, nothing unbounded is kept. */
const MAX_KEY_LENGTH = 512;

/** A worker's question: count one more for `key` in this window; the answer is the count as the local store gives it. */
const limitCount = z.strictObject({
  key: z.string().max(MAX_KEY_LENGTH),
  timeWindow: z.number().positive().finite(),
  max: z.number().nonnegative().finite(),
  continueExceeding: z.boolean(),
  exponentialBackoff: z.boolean(),
});
const limitQuestion = question(
  'limit-count',
  limitCount,
  z.strictObject({ current: z.number().finite(), ttl: z.number().finite() }),
);

/** The primary's side: counts every worker's questions in one local store (per counting rule) and answers the asker. */
export function countLimitsForWorkers(channel: Pick<WorkersChannel, 'answer'>): void {
  const stores = new Map<string, FastifyRateLimitStore>();
  channel.answer(limitQuestion, ({ key, timeWindow, max, continueExceeding, exponentialBackoff }) => {
    const rule = `${continueExceeding}/${exponentialBackoff}`;
    let store = stores.get(rule);
    if (!store) {
      store = new LocalStore(continueExceeding, exponentialBackoff);
      stores.set(rule, store);
    }
    return new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store.incr(key, (error, result) => (error || !result ? reject(error ?? new Error('no count')) : resolve({ current: result.current, ttl: result.ttl })), timeWindow, max),
    );
  });
}

export interface NodeLimits {
  /** A store for @fastify/rate-limit (`store`) whose keys go under `limit` (e.g. `sign-in`): the primary's count, this worker's when it fails. */
  store(limit: string): FastifyRateLimitStoreCtor;
  close(): void;
}

/** A worker's side: counts asked of the primary, through the node's channel. */
export function workerLimits(log: Pick<FastifyBaseLogger, 'warn' | 'info'>, channel: Pick<PrimaryChannel, 'ask'>, timeout = ANSWER_TIMEOUT): NodeLimits {
  let lastWarning = 0;
  let warned = false;
  let closed = false;
  /** The counts asked and not answered yet: closing answers them at once (the worker is stopping). */
  const waiting = new Set<(error: Error) => void>();

  const failed = (reason: string) => {
    const now = Date.now();
    if (now - lastWarning < WARNING_INTERVAL) return;
    lastWarning = now;
    warned = true;
    log.warn({ reason }, "this node's primary process does not count the rate limits: each worker counts its own until it answers again");
  };

  function ask(count: z.output<typeof limitCount>, answer: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
    if (closed) return answer(new Error('rate limit not counted: stopping'));
    const stop = (error: Error) => answer(error);
    waiting.add(stop);
    // An answer after the deadline is dropped by the channel (the request went on already).
    channel.ask(limitQuestion, count, { deadline: timeout }).then(
      (result) => {
        if (!waiting.delete(stop)) return;
        if (warned) {
          warned = false;
          log.info("this node's primary process counts the rate limits again");
        }
        answer(null, result);
      },
      (error: unknown) => {
        if (!waiting.delete(stop)) return;
        const reason = error instanceof AskFailed && error.reason === 'deadline' ? `no answer within ${timeout} ms` : error instanceof Error ? error.message : String(error);
        failed(reason);
        answer(new Error(`rate limit not counted: ${reason}`));
      },
    );
  }

  return {
    store(limit) {
      class PrimaryCountedStore implements FastifyRateLimitStore {
        /** The plugin's options (and a route's, for a child): how to count past the limit. */
        private readonly options: CountingRule;
        constructor(options: object = {}) {
          this.options = options as CountingRule;
        }

        incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
          ask(
            {
              key: `${limit}:${key}`,
              timeWindow,
              max,
              continueExceeding: this.options.continueExceeding === true,
              exponentialBackoff: this.options.exponentialBackoff === true,
            },
            callback,
          );
        }

        child(routeOptions: object): FastifyRateLimitStore {
          return new PrimaryCountedStore(routeOptions);
        }
      }
      return class CountedByPrimary extends WithLocalFallback {
        constructor(options: object = {}) {
          super(new PrimaryCountedStore(options), options as CountingRule);
        }
      };
    },
    close() {
      closed = true;
      for (const stop of waiting) stop(new Error('rate limit not counted: stopping'));
      waiting.clear();
    },
  };
}
