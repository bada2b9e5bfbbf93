/**
 * A bounded in-process cache of resolved sessions, keyed by the hash of the credential (portal cookie
 * or app-host token), so the proxy's hot path does not query the database on every request. Every
 * revocation and claims change invalidates the session's entries at once (`invalidate`), and entries
 * expire after `ttlMs` regardless, so no cache keeps a dead session alive.
 */
export class SessionCache<V extends { sessionId: string }> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private readonly keysBySession = new Map<string, Set<string>>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt >= this.ttlMs) {
      this.delete(key, entry.value.sessionId);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      // Oldest first: Map iterates in insertion order.
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.delete(oldestKey, oldest.value.sessionId);
    }
    this.entries.set(key, { value, storedAt: this.entries.get(key)?.storedAt ?? this.now() });
    let keys = this.keysBySession.get(value.sessionId);
    if (!keys) this.keysBySession.set(value.sessionId, (keys = new Set()));
    keys.add(key);
  }

  /** Updates a cached value in place (e.g. last-seen), keeping its age. */
  update(key: string, value: V): void {
    const entry = this.entries.get(key);
    if (entry) entry.value = value;
  }

  invalidate(sessionId: string): void {
    const keys = this.keysBySession.get(sessionId);
    if (!keys) return;
    for (const key of keys) this.entries.delete(key);
    this.keysBySession.delete(sessionId);
  }

  clear(): void {
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
