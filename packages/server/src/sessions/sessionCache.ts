import { SESSION_CACHE_DEFAULT_MAX_MEMORY } from '../config/schema.js';
import type { SessionCacheStats } from '../operations/metrics.js';

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
 *
 * The bound is a memory budget (`maxBytes`, session.cache.maxMemory), not a count: an entry holds a
 * session row with its encrypted tokens, a user, an identity and its claims, so one IdP's entries can be
 * several times another's. Each entry is charged what `estimateBytes` makes of its actual strings and
 * objects, plus `ENTRY_OVERHEAD` for the cache's own structures (both measured: bench/session-cache-memory.ts,
 * docs/operations/sizing.md). Eviction is least recently *stored* (the Map's insertion order), not least
 * recently used: an LRU must move an entry on every hit (a Map delete and set, on the ~12 µs forward-auth
 * path), while here a hit does nothing but read. The ttl makes the difference small: every entry is
 * stored again at least once a ttl while it is used, so a busy session never stays at the head for
 * long; entries that expired unread are dropped from the head first, at each store.
 */
export class SessionCache<V extends { sessionId: string }> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly keysBySession = new Map<string, Set<string>>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly maxBytes: () => number;
  private readonly sizeOf: (value: V) => number;
  private invalidations = 0;
  private hits = 0;
  private misses = 0;
  private bytes = 0;
  private readonly evictions: Record<EvictionReason, number> = { budget: 0, ttl: 0, invalidation: 0 };

  constructor(options: SessionCacheOptions<V> = {}) {
    const { maxBytes = DEFAULT_MAX_BYTES } = options;
    this.maxBytes = typeof maxBytes === 'function' ? maxBytes : () => maxBytes;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.sizeOf = options.sizeOf ?? estimateBytes;
  }

  /** The value cached for a credential in this scope; `now` spares a second clock read to a caller that has one. */
  get(credential: string, scope: string, now = this.now()): V | undefined {
    const entry = this.entries.get(credential);
    if (!entry || entry.scope !== scope) {
      this.misses++;
      return undefined;
    }
    if (now - entry.storedAt >= this.ttlMs) {
      this.remove(credential, entry);
      this.evictions.ttl++;
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.value;
  }

  /** What metrics read at a scrape: lookups, what is held against the budget, and what was dropped, by why. */
  get stats(): SessionCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes(), evictions: { ...this.evictions } };
  }

  /** Read before loading a value from the database; pass it to `set`. */
  get generation(): number {
    return this.invalidations;
  }

  /**
   * Stores a value loaded since `generation` was read; refused (false) when an invalidation happened
   * since, as the value may be of a session revoked while it was being read. True means the value is
   * as current as the read: it is stored, unless it alone is larger than the whole budget (then it is
   * counted as evicted by the budget, and the next lookup loads it again).
   */
  set(credential: string, scope: string, value: V, generation: number): boolean {
    if (generation !== this.invalidations) return false;
    const previous = this.entries.get(credential);
    if (previous) this.remove(credential, previous);
    const now = this.now();
    // Expired entries are at the head (storing order is age order): dropped first, so that memory
    // follows the sessions used within a ttl, not every session seen until the budget is full.
    this.dropOldest((oldest) => now - oldest.storedAt >= this.ttlMs, 'ttl');
    const bytes = this.entryBytes(credential, value);
    const maxBytes = this.maxBytes();
    if (bytes > maxBytes) {
      this.evictions.budget++;
      return true;
    }
    this.dropOldest(() => this.bytes + bytes > maxBytes, 'budget');
    this.entries.set(credential, { value, scope, storedAt: now, bytes });
    this.bytes += bytes;
    let keys = this.keysBySession.get(value.sessionId);
    if (!keys) this.keysBySession.set(value.sessionId, (keys = new Set()));
    keys.add(credential);
    return true;
  }

  /** Updates a cached value in place (e.g. last-seen), keeping its age; its size is charged again. */
  update(credential: string, scope: string, value: V): void {
    const entry = this.entries.get(credential);
    if (entry?.scope !== scope || entry.value.sessionId !== value.sessionId) return;
    entry.value = value;
    const bytes = this.entryBytes(credential, value);
    this.bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    const maxBytes = this.maxBytes();
    this.dropOldest(() => this.bytes > maxBytes, 'budget');
  }

  invalidate(sessionId: string): void {
    this.invalidations++;
    const keys = this.keysBySession.get(sessionId);
    if (!keys) return;
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
      this.evictions.invalidation++;
    }
    this.keysBySession.delete(sessionId);
  }

  clear(): void {
    this.invalidations++;
    this.evictions.invalidation += this.entries.size;
    this.entries.clear();
    this.keysBySession.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** What an entry is charged: its value's estimate, its key, and the cache's own structures. */
  private entryBytes(credential: string, value: V): number {
    return ENTRY_OVERHEAD + stringBytes(credential) + this.sizeOf(value);
  }

  /** Drops entries from the head (the oldest stored) as long as `drop` says so. */
  private dropOldest(drop: (oldest: Entry<V>) => boolean, reason: EvictionReason): void {
    for (const [key, entry] of this.entries) {
      if (!drop(entry)) return;
      this.remove(key, entry);
      this.evictions[reason]++;
    }
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    const keys = this.keysBySession.get(entry.value.sessionId);
    keys?.delete(key);
    if (keys?.size === 0) this.keysBySession.delete(entry.value.sessionId);
  }
}

interface Entry<V> {
  value: V;
  scope: string;
  storedAt: number;
  /** What this entry is charged against the budget (`entryBytes`). */
  bytes: number;
}

/** Why entries left the cache: to keep within the budget, their ttl ran out, or their session was invalidated (or everything was). */
type EvictionReason = keyof SessionCacheStats['evictions'];

export interface SessionCacheOptions<V> {
  /** The memory budget in bytes, or where to read it at each store (a reload may change it). */
  maxBytes?: number | (() => number) | undefined;
  ttlMs?: number;
  now?: () => number;
  /** What a value is charged; `estimateBytes` unless a test says otherwise. */
  sizeOf?: (value: V) => number;
}

/** The budget when none is given (tests): session.cache.maxMemory's default. */
const DEFAULT_MAX_BYTES = SESSION_CACHE_DEFAULT_MAX_MEMORY;

/*
 * V8's object sizes on 64-bit Node (official builds have no pointer compression: a field is 8 bytes).
 * They describe plain data — what a database row, and JSON.parse's output, are made of — and are
 * checked against the heap by bench/session-cache-memory.ts, which measures real entries.
 */
const WORD = 8;
/** A string: map, hash and length, then its characters (one byte each, or two when any is above U+00FF), rounded up to a word. */
const STRING_HEADER = 16;
/** An object: map, properties and elements pointers; each property a word after that. */
const OBJECT_HEADER = 3 * WORD;
/** An array: the JSArray (map, properties, elements, length) and its elements' store (map, length). */
const ARRAY_HEADER = 6 * WORD;
/** A number that is not a small integer is a boxed double (map and value). */
const HEAP_NUMBER = 2 * WORD;
/**
 * Per entry, beyond what `estimateBytes` makes of its value and its key: the Map's slot, the entry
 * object (value, scope, storedAt boxed, bytes), the session's index (a slot in keysBySession and its Set
 * of credentials), and what the value's objects cost beyond a word per member. (The rows are object
 * literals, sessionStore.ts's findWithPerson: one compact shape each. Built a column at a time they were
 * hash tables on SQLite, about 700 bytes more, and this was 1,230.) Measured on the heap with 100,000
 * entries of three IdPs' shapes (bench/session-cache-memory.ts; measure again when the loading changes),
 * and set to the largest residual, so that the estimate errs high (docs/operations/sizing.md has the figures).
 */
export const ENTRY_OVERHEAD = 520;

const TWO_BYTE = /[^\0-\xff]/;

function stringBytes(value: string): number {
  const chars = TWO_BYTE.test(value) ? 2 * value.length : value.length;
  return STRING_HEADER + Math.ceil(chars / WORD) * WORD;
}

/**
 * The heap bytes of a plain value (strings, numbers, booleans, null, arrays and objects of them), from
 * its actual strings and shape. A string referenced twice is counted twice: an estimate that errs high.
 */
export function estimateBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? 0 : HEAP_NUMBER;
    case 'object': {
      if (value === null) return 0;
      if (Array.isArray(value)) {
        let bytes = ARRAY_HEADER + WORD * value.length;
        for (const item of value) bytes += estimateBytes(item);
        return bytes;
      }
      let bytes = OBJECT_HEADER;
      for (const key in value) bytes += WORD + estimateBytes((value as Record<string, unknown>)[key]);
      return bytes;
    }
    default:
      // Booleans and undefined are shared constants; anything else (a function, a bigint) is not cached data.
      return 0;
  }
}
