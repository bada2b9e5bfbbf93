/**
 * Failed client authentications per client address (the token, introspection, revocation and PAR
 * endpoints): past `max` in a window, the address is refused until the window ends. Counted in this
 * process: a node's workers each count their own (like the local count beside the sign-in limit's
 * shared one, limits/limitFallback.ts), so an attacker gets at most `max` per worker per window.
 */
export class ClientAuthLimit {
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    readonly max = 20,
    readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one failure of this address. */
  failed(ip: string): void {
    const now = this.now();
    const entry = this.failures.get(ip);
    if (!entry || entry.until <= now) {
      // Bounded: an address flood empties the table of expired entries first, then starts afresh.
      if (this.failures.size >= 100_000) this.sweep(now);
      this.failures.set(ip, { count: 1, until: now + this.windowMs });
    } else entry.count += 1;
  }

  /** Seconds until this address may try again, when it is refused; undefined when it may. */
  blocked(ip: string): number | undefined {
    const entry = this.failures.get(ip);
    const now = this.now();
    if (!entry || entry.until <= now || entry.count < this.max) return undefined;
    return Math.max(1, Math.ceil((entry.until - now) / 1000));
  }

  private sweep(now: number): void {
    for (const [ip, entry] of this.failures) if (entry.until <= now) this.failures.delete(ip);
    if (this.failures.size >= 100_000) this.failures.clear();
  }
}
