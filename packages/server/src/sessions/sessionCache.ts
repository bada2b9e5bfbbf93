/**
 * A bounded in-process cache of resolved sessions, so the proxy's hot path does not query the database
 * on every request. Entries are keyed by the credential itself (the portal cookie or an app-host token:
 * 256 random bits, held in memory only, where the credential passes through anyway) and remember the one
 * scope it is good for (the portal, or one app origin): a lookup from any other scope is a miss. Keying
 * by the bare credential rather than by "scope + credential" spares the hot path building and hashing a
 * new string per request. Every revocation and claims change invalidates the session's entries at once
 * (`invalidate`), and entries expire after `ttlMs` regardless, so no cache keeps a dead session alive.
 *
 * A value read from the database before a revocation must not be stored after it: the revocation's
 * `invalidate` would have found nothing to drop, and the dead session would be served from here until
 * the ttl. So every `invalidate` and `clear` bumps `generation`; a loader reads it before its database
 * read and hands it to `set`, which refuses to store when anything was invalidated in between. One
 * counter for all sessions (a loader does not know the session id before its read); the price is a
 * missed store, never a wrong one.
 */
export class SessionCache<V extends { sessionId: string }> {
  private readonly entries = new Map<string, { value: V; scope: string; storedAt: number }>();
  private readonly keysBySession = new Map<string, Set<string>>();
  private invalidations = 0;
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value cached for a credential in this scope; `now` spares a second clock read to a caller that has one. */
  get(credential: string, scope: string, now = this.now()): V | undefined {
    const entry = this.entries.get(credential);
    if (!entry || entry.scope !== scope) {
      this.misses++;
      return undefined;
    }
    if (now - entry.storedAt >= this.ttlMs) {
      this.delete(credential, entry.value.sessionId);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.value;
  }

  /** Lookups so far that found a value (hits) and that did not (misses), for metrics. */
  get lookups(): { hits: number; misses: number } {
    return { hits: this.hits, misses: this.misses };
  }

  /** Read before loading a value from the database; pass it to `set`. */
  get generation(): number {
    return this.invalidations;
  }

  /**
   * Stores a value loaded since `generation` was read; refused (false) when an invalidation happened
   * since, as the value may be of a session revoked while it was being read.
   */
  set(credential: string, scope: string, value: V, generation: number): boolean {
    if (generation !== this.invalidations) return false;
    const previous = this.entries.get(credential);
    if (previous) this.delete(credential, previous.value.sessionId);
    if (this.entries.size >= this.maxEntries) {
      // Oldest first: Map iterates in insertion order.
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.delete(oldestKey, oldest.value.sessionId);
    }
    this.entries.set(credential, { value, scope, storedAt: this.now() });
    let keys = this.keysBySession.get(value.sessionId);
    if (!keys) this.keysBySession.set(value.sessionId, (keys = new Set()));
    keys.add(credential);
    return true;
  }

  /** Updates a cached value in place (e.g. last-seen), keeping its age. */
  update(credential: string, scope: string, value: V): void {
    const entry = this.entries.get(credential);
    if (entry?.scope === scope && entry.value.sessionId === value.sessionId) entry.value = value;
  }

  invalidate(sessionId: string): void {
    this.invalidations++;
    const keys = this.keysBySession.get(sessionId);
    if (!keys) return;
    for (const key of keys) this.entries.delete(key);
    this.keysBySession.delete(sessionId);
  }

  clear(): void {
    this.invalidations++;
    this.entries.clear();
    this.keysBySession.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private delete(key: string, sessionId: string): void {
    this.entries.delete(key);
    const keys = this.keysBySession.get(sessionId);
    keys?.delete(key);
    if (keys?.size === 0) this.keysBySession.delete(sessionId);
  }
}
