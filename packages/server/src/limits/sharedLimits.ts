import { createRequire } from 'node:module';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import { WithLocalFallback, type CountingRule } from './limitFallback.js';

/**
 * The Redis client rate limits count in when several nodes must share them (`cache.url`): the sign-in
 * rate limit and the failed client authentications of the OpenID Provider use it, and it must never
 * hold a request up: a command is refused at once while the connection is down (no offline queue)
 * and given up after COMMAND_TIMEOUT when Redis stops answering. The limits are never off meanwhile:
 * each process's own count decides (limits/limitFallback.ts), and the log says so.
 */
export interface SharedLimits {
  /** The client the counts go to; every failure of a command is logged (see observed()). */
  redis: Redis;
  /** Where a limit's keys go: `<cache.keyPrefix>rate-limit:<what>:`. */
  nameSpace(limit: string): string;
  /** A store for @fastify/rate-limit (`store`) counting `limit` in Redis, and in this process when Redis fails. */
  store(limit: string): FastifyRateLimitStoreCtor;
  close(): Promise<void>;
}

/** The plugin's own Redis counter (not exported by its entry point): one Lua script per count. */
type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => FastifyRateLimitStore;
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore') as RedisStoreCtor;

/** How long a command may take before the limiter gives up on it and this process's count decides. */
export const COMMAND_TIMEOUT = 500;
const CONNECT_TIMEOUT = 2_000;
/** At most one warning a minute: a Redis that is down fails every count. */
const WARNING_INTERVAL = 60_000;

/** The client for `cache.url`, or undefined without one (each node then counts on its own). */
export function openSharedLimits(cache: Config['cache'], log: FastifyBaseLogger): SharedLimits | undefined {
  if (!cache.url) return undefined;
  const url = new URL(cache.url);
  // Where it connects, for the log: never the URL itself, which may carry a password.
  const target = `${url.protocol}//${url.host}${url.pathname.length > 1 ? url.pathname : ''}`;
  const client = new Redis(cache.url, {
    // rediss:// means TLS whatever its spelling (ioredis itself recognises only the lower-case one).
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT,
    commandTimeout: COMMAND_TIMEOUT,
    // Reconnect soon after Redis is back (ioredis's default backs off to 5 s).
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });

  let lastWarning = 0;
  let warned = false;
  const failed = (error: unknown) => {
    const now = Date.now();
    if (now - lastWarning < WARNING_INTERVAL) return;
    lastWarning = now;
    warned = true;
    log.warn(
      { redis: target, error: error instanceof Error ? error.message : String(error) },
      'Redis (cache.url) failed: each process counts the rate limits on its own until it answers again',
    );
  };
  const answered = () => {
    if (!warned) return;
    warned = false;
    log.info({ redis: target }, 'Redis (cache.url) answers again: the rate limits are counted there again, across nodes');
  };
  // Connection errors come as events (and must be listened to, or ioredis prints them itself).
  client.on('error', failed);

  const redis = observed(client, failed, answered);
  const nameSpace = (limit: string) => `${cache.keyPrefix}rate-limit:${limit}:`;
  return {
    redis,
    nameSpace,
    store(limit) {
      const key = nameSpace(limit);
      return class CountedInRedis extends WithLocalFallback {
        constructor(options: object = {}) {
          const rule = options as CountingRule;
          super(new RedisStore(rule.continueExceeding === true, rule.exponentialBackoff === true, redis, key), rule);
        }
      };
    },
    async close() {
      // quit() waits for a connection that may never come; disconnect() does not.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

/**
 * The client as the limiter sees it: the same client, except that each command's outcome is also
 * reported — a failure (refused while disconnected, timed out, an error reply) to `failed`, an answer
 * to `answered` — before its caller sees it. The limiter skips on errors silently; this is how the log
 * hears of them.
 */
function observed(client: Redis, failed: (error: unknown) => void, answered: () => void): Redis {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = Reflect.apply(value, target, args);
        // Commands answer with a promise (also when given a callback): a second observer of it.
        if (result instanceof Promise) result.then(answered, failed);
        return result;
      };
    },
  });
}
