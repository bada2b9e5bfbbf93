import type { Cluster, Worker } from 'node:cluster';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import { LocalStore, WithLocalFallback, type CountingRule } from './limitFallback.js';

/**
 * Rate limits counted once per node under `workers:` when there is no Redis (`cache.url`): each worker
 * would otherwise count alone, and a node of eight workers would allow eight times the limit. The
 * workers ask their primary over the cluster's IPC channel; the primary counts in @fastify/rate-limit's
 * own local store, so the windows and limits are exactly those of a single process. A primary that
 * does not answer within ANSWER_TIMEOUT leaves the worker's own count to decide (limits/limitFallback.ts:
 * the limit is never off, at worst each worker counts alone), logged at most once a minute.
 */

/** How long a worker waits for its primary's count before its own count decides. */
export const ANSWER_TIMEOUT = 500;
/** At most one warning a minute: a primary that does not answer fails every sign-in's count. */
const WARNING_INTERVAL = 60_000;
/** Keys and windows come from the workers, which are ours; still, nothing unbounded is kept. */
const MAX_KEY_LENGTH = 512;

/** A worker's question: count one more for `key` in this window. */
interface LimitQuestion {
  gatehouseLimit: { id: number; key: string; timeWindow: number; max: number; continueExceeding: boolean; exponentialBackoff: boolean };
}
/** The primary's answer, as the local store gives it. */
interface LimitAnswer {
  gatehouseLimitAnswer: { id: number; current: number; ttl: number };
}

function isQuestion(message: unknown): message is LimitQuestion {
  const question = (message as Partial<LimitQuestion> | null)?.gatehouseLimit;
  return (
    typeof question === 'object' &&
    question !== null &&
    Number.isSafeInteger(question.id) &&
    typeof question.key === 'string' &&
    question.key.length <= MAX_KEY_LENGTH &&
    Number.isFinite(question.timeWindow) &&
    question.timeWindow > 0 &&
    Number.isFinite(question.max) &&
    question.max >= 0
  );
}

function isAnswer(message: unknown): message is LimitAnswer {
  const answer = (message as Partial<LimitAnswer> | null)?.gatehouseLimitAnswer;
  return typeof answer === 'object' && answer !== null && Number.isSafeInteger(answer.id) && Number.isFinite(answer.current) && Number.isFinite(answer.ttl);
}

/** The primary's side: counts every worker's questions in one local store (per counting rule) and answers the asker. */
export function countLimitsForWorkers(cluster: Pick<Cluster, 'on'>): void {
  const stores = new Map<string, FastifyRateLimitStore>();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isQuestion(message)) return;
    const { id, key, timeWindow, max, continueExceeding, exponentialBackoff } = message.gatehouseLimit;
    const rule = `${continueExceeding === true}/${exponentialBackoff === true}`;
    let store = stores.get(rule);
    if (!store) {
      store = new LocalStore(continueExceeding === true, exponentialBackoff === true);
      stores.set(rule, store);
    }
    store.incr(
      key,
      (error, result) => {
        if (error || !result || !worker.isConnected()) return;
        worker.send({ gatehouseLimitAnswer: { id, current: result.current, ttl: result.ttl } } satisfies LimitAnswer);
      },
      timeWindow,
      max,
    );
  });
}

export interface NodeLimits {
  /** A store for @fastify/rate-limit (`store`) whose keys go under `limit` (e.g. `sign-in`): the primary's count, this worker's when it fails. */
  store(limit: string): FastifyRateLimitStoreCtor;
  close(): void;
}

/** A worker's side: counts asked of the primary, through `channel` (the worker's process). */
export function workerLimits(log: Pick<FastifyBaseLogger, 'warn' | 'info'>, channel: Pick<NodeJS.Process, 'send' | 'on' | 'off' | 'connected'> = process, timeout = ANSWER_TIMEOUT): NodeLimits {
  const pending = new Map<number, { answer: (error: Error | null, result?: { current: number; ttl: number }) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  let lastWarning = 0;
  let warned = false;

  const failed = (reason: string) => {
    const now = Date.now();
    if (now - lastWarning < WARNING_INTERVAL) return;
    lastWarning = now;
    warned = true;
    log.warn({ reason }, "this node's primary process does not count sign-ins: each worker counts its own until it answers again");
  };
  const listener = (message: unknown) => {
    if (!isAnswer(message)) return;
    const { id, current, ttl } = message.gatehouseLimitAnswer;
    const waiting = pending.get(id);
    // An answer after its question was given up on is dropped (the request went on already).
    if (!waiting) return;
    pending.delete(id);
    clearTimeout(waiting.timer);
    if (warned) {
      warned = false;
      log.info("this node's primary process counts sign-ins again");
    }
    waiting.answer(null, { current, ttl });
  };
  channel.on('message', listener);

  function ask(question: Omit<LimitQuestion['gatehouseLimit'], 'id'>, answer: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
    const id = (nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER);
    const giveUp = (reason: string) => {
      if (!pending.delete(id)) return;
      failed(reason);
      answer(new Error(`rate limit not counted: ${reason}`));
    };
    const timer = setTimeout(() => giveUp(`no answer within ${timeout} ms`), timeout);
    timer.unref();
    pending.set(id, { answer, timer });
    if (!channel.connected || !channel.send) {
      clearTimeout(timer);
      giveUp('no channel to the primary');
      return;
    }
    channel.send({ gatehouseLimit: { id, ...question } } satisfies LimitQuestion, undefined, undefined, (error: Error | null) => {
      if (error) {
        clearTimeout(timer);
        giveUp(error.message);
      }
    });
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
      channel.off('message', listener);
      for (const [id, waiting] of pending) {
        clearTimeout(waiting.timer);
        pending.delete(id);
        waiting.answer(new Error('rate limit not counted: stopping'));
      }
    },
  };
}
