import { rateLimitKey } from '../http/trustedProxies.js';
import type { Count } from '../limits/limitCounter.js';

/** The answer to an address past its budget: an OAuth error (RFC 6749 §5.2's shape), as the endpoints' own. */
export const TOO_MANY_FAILURES = { error: 'invalid_client', error_description: 'too many failed client authentications: try again later' } as const;

/** Bounded: an address flood empties the table of ended windows first, then starts afresh. */
const MAX_REFUSED = 100_000;

/**
 * Failed client authentications per client address (the token, introspection, revocation and PAR
 * endpoints): past `max` in a window, the address is refused until the window ends.
 *
 * Threat: guessing a client's secret, spread over the workers of a node and the nodes behind a load
 * balancer. The failures are counted where the sign-in rate limit counts (`count`, limits/limitCounter.ts):
 * in Redis across the nodes with `cache.url`, else in the node's primary for all its workers, and in
 * this process beside either, whose count decides when they do not answer: the limit is never off.
 *
 * The cost stays off the way of clients that authenticate:
 * - Only a failure is counted, and only a failed request waits for its count (a round trip to Redis or
 *   the primary, at most 500 ms). A successful client authentication costs nothing here.
 * - Whether an address is refused is asked before every request, so it is answered from this process's
 *   memory, never by a round trip: the addresses whose count reached `max`, as the answers to this
 *   process's counts said, until their window ends (the ttl in the answer). Asking Redis or the
 *   primary first would cost every token request a round trip.
 * - So a process learns that an address reached its budget elsewhere only from a count of its own: the
 *   first failure it counts past the budget is answered 429 (not 401) and refuses the address from then
 *   on. Every process lets at most one attempt past the budget reach authentication, so an address gets
 *   at most `max` plus one per further process (workers × nodes) checked in a window, however its
 *   attempts are spread; counted per process it was `max` per process.
 */
export class ClientAuthLimit {
  /** Normalised address → when its window ends (ms): the addresses the counts said reached `max`. */
  private readonly refused = new Map<string, number>();

  constructor(
    private readonly count: Count,
    readonly max = 20,
    readonly windowMs = 60_000,
  ) {}

  /**
   * Counts one failure of this address; resolves with the seconds until it may try again when this
   * failure was past the budget (answer it 429), undefined while within it.
   */
  async failed(address: string | undefined): Promise<number | undefined> {
    const key = rateLimitKey(address);
    const { current, ttl } = await this.count(key, this.windowMs, this.max);
    if (current < this.max) return undefined;
    // Fail closed: a window without a time left (none of the stores answers so) is a whole window.
    const until = Date.now() + (ttl > 0 ? ttl : this.windowMs);
    if (!this.refused.has(key) && this.refused.size >= MAX_REFUSED) this.sweep();
    this.refused.set(key, Math.max(until, this.refused.get(key) ?? 0));
    return current > this.max ? this.blocked(address) : undefined;
  }

  /** Seconds until this address may try again, when it is refused; undefined when it may. */
  blocked(address: string | undefined): number | undefined {
    const key = rateLimitKey(address);
    const until = this.refused.get(key);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left > 0) return Math.max(1, Math.ceil(left / 1000));
    this.refused.delete(key);
    return undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, until] of this.refused) if (until <= now) this.refused.delete(key);
    if (this.refused.size >= MAX_REFUSED) this.refused.clear();
  }
}
