import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalStore, WithLocalFallback } from '../../src/limits/limitFallback.js';
import { limitCounter, type CountedLimits } from '../../src/limits/limitCounter.js';
import { openSharedLimits } from '../../src/limits/sharedLimits.js';
import { ClientAuthLimit } from '../../src/provide/clientAuthLimit.js';
import { freePort } from '../support/ports.js';

/**
 * The counting of failed client authentications, on the stores the server counts in (@fastify/rate-limit's
 * local store, as a single process, as each process beside a shared count, and as the node's primary).
 * Across real processes and a real Redis: test/integration/rateLimitWorkers.test.ts and rateLimitRedis.test.ts.
 */

/**
 * Processes that count in one place: each process's store is what Redis or the primary gives it
 * (limits/sharedLimits.ts, limits/clusterLimits.ts): the shared count, with the process's own beside
 * it. The shared count here is the local store the primary counts its workers' questions in.
 */
function countedTogether(): () => CountedLimits {
  const shared = new LocalStore(false, false);
  return () => ({
    store: (): FastifyRateLimitStoreCtor =>
      class Together extends WithLocalFallback {
        constructor(options: object = {}) {
          super(shared, options);
        }
      },
  });
}

describe('the limit on failed client authentications', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses an address past its failures until the window ends, and only that address', async () => {
    // Threat: guessing a client secret at the token endpoint, one guess after another.
    const limit = new ClientAuthLimit(limitCounter(undefined, 'client-auth'), 3, 60_000);
    for (let i = 0; i < 2; i++) expect(await limit.failed('192.0.2.1')).toBeUndefined();
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
    // The third failure is within the budget (answered as it is), and the address is refused from now on.
    expect(await limit.failed('192.0.2.1')).toBeUndefined();
    expect(limit.blocked('192.0.2.1')).toBe(60);
    expect(limit.blocked('192.0.2.2')).toBeUndefined();
    vi.advanceTimersByTime(30_000);
    expect(limit.blocked('192.0.2.1')).toBe(30);
    vi.advanceTimersByTime(30_000);
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
    // A new window counts from nothing.
    expect(await limit.failed('192.0.2.1')).toBeUndefined();
    expect(limit.blocked('192.0.2.1')).toBeUndefined();
  });

  // Regression: the failures were counted per raw client address (request.ip).
  it('counts one budget for the spellings of an address and for an IPv6 /64', async () => {
    // Threat: an attacker with an IPv6 /64 (every subscriber has one) or a proxy that writes ports
    // guessing with a fresh budget from each address of it, as the sign-in limit prevents.
    const limit = new ClientAuthLimit(limitCounter(undefined, 'client-auth'), 3, 60_000);
    await limit.failed('2001:db8:1:2::a');
    await limit.failed('2001:db8:1:2:ffff:ffff:ffff:ffff');
    await limit.failed('[2001:db8:1:2::b]:443');
    expect(limit.blocked('2001:db8:1:2::c')).toBe(60);
    expect(limit.blocked('2001:db8:1:3::a')).toBeUndefined();
    await limit.failed('::ffff:192.0.2.7');
    await limit.failed('192.0.2.7:5000');
    await limit.failed('192.0.2.7');
    expect(limit.blocked('192.0.2.7')).toBe(60);
  });

  it('counts the failures of every process in one place: a process that never saw one refuses the first past the budget', async () => {
    // Threat: guesses spread over the workers of a node or the nodes behind a load balancer, each of
    // which would otherwise allow the budget again.
    const together = countedTogether();
    const [a, b, c] = [0, 1, 2].map(() => new ClientAuthLimit(limitCounter(together(), 'client-auth'), 4, 60_000)) as [ClientAuthLimit, ClientAuthLimit, ClientAuthLimit];
    for (const node of [a, b, a]) expect(await node.failed('192.0.2.1')).toBeUndefined();
    expect([a, b, c].map((node) => node.blocked('192.0.2.1'))).toEqual([undefined, undefined, undefined]);
    // The fourth, on B: within the budget, and B refuses the address from now on.
    expect(await b.failed('192.0.2.1')).toBeUndefined();
    expect(b.blocked('192.0.2.1')).toBe(60);
    // A and C have not heard (nothing is asked before authenticating): the next failure each counts is
    // past the budget, answered 429, and from then on each refuses before authenticating.
    vi.advanceTimersByTime(10_000);
    expect(a.blocked('192.0.2.1')).toBeUndefined();
    expect(await a.failed('192.0.2.1')).toBe(50);
    expect(a.blocked('192.0.2.1')).toBe(50);
    expect(await c.failed('192.0.2.1')).toBe(50);
    expect(c.blocked('192.0.2.1')).toBe(50);
    // Another address is another budget, everywhere.
    expect(await c.failed('192.0.2.2')).toBeUndefined();
    expect(c.blocked('192.0.2.2')).toBeUndefined();
  });

  it('still counts, in this process, while Redis cannot be reached', async () => {
    // Threat: brute force that first makes the shared count fail (Redis down), then guesses without a limit.
    vi.useRealTimers();
    const logs: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
    const shared = openSharedLimits({ url: `redis://127.0.0.1:${await freePort()}`, keyPrefix: 'gatehouse:' }, log)!;
    try {
      const limit = new ClientAuthLimit(limitCounter(shared, 'client-auth'), 3, 60_000);
      for (let i = 0; i < 3; i++) expect(await limit.failed('192.0.2.9')).toBeUndefined();
      expect(limit.blocked('192.0.2.9')).toBeGreaterThan(0);
      expect(await limit.failed('192.0.2.9')).toBeGreaterThan(0);
      // Said once (at most once a minute), however many counts failed.
      expect(logs.filter((entry) => entry.level === 40 && entry.msg.includes('counts the rate limits on its own'))).toHaveLength(1);
    } finally {
      await shared.close();
    }
  });
});
