import { parseCookie } from 'cookie';
import { describe, expect, it } from 'vitest';
import { cookieValue } from '../src/sessions/cookies.js';
import { createMetrics } from '../src/operations/metrics.js';
import { ENTRY_OVERHEAD, estimateBytes, SessionCache } from '../src/sessions/sessionCache.js';

describe('cookieValue', () => {
  const name = 'gatehouse_app';

  it('reads the plain case without parsing, and answers as the parser for everything else', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      [undefined, undefined],
      ['', undefined],
      ['gatehouse_app=abc', 'abc'],
      ['a=1; gatehouse_app=abc; b=2', 'abc'],
      ['a=1;gatehouse_app=abc', 'abc'],
      ['a=1;\tgatehouse_app=abc', 'abc'],
      ['gatehouse_app=', ''],
      ['x_gatehouse_app=evil', undefined],
      ['x_gatehouse_app=evil; gatehouse_app=good', 'good'],
      ['a=gatehouse_app=evil; gatehouse_app=good', 'good'],
      ['gatehouse_app=first; gatehouse_app=second', 'first'],
      ['gatehouse_app =spaced; gatehouse_app=second', 'spaced'],
      ['gatehouse_app= padded ; b=2', 'padded'],
      ['gatehouse_app=a%20b', 'a b'],
      ['gatehouse_app=%zz', '%zz'],
      ['gatehouse_app="quoted"', '"quoted"'],
      ['gatehouse_app', undefined],
      ['gatehouse_app; gatehouse_app=late', 'late'],
      ['__Host-gatehouse_app=secure', undefined],
    ];
    for (const [header, expected] of cases) {
      expect(cookieValue(header, name), String(header)).toBe(expected);
      if (header) expect(cookieValue(header, name), header).toBe(parseCookie(header)[name]);
    }
  });

  it('agrees with the parser on random headers built from cookie-ish pieces', () => {
    const pieces = ['gatehouse_app', '__Host-gatehouse_app', 'x', '=', ';', ' ', '\t', 'abc', '%41', '%', '"', ',', 'gatehouse_app=v'];
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let run = 0; run < 20_000; run++) {
      let header = '';
      const length = 1 + Math.floor(random() * 8);
      for (let i = 0; i < length; i++) header += pieces[Math.floor(random() * pieces.length)];
      for (const cookie of ['gatehouse_app', '__Host-gatehouse_app']) {
        expect(cookieValue(header, cookie), JSON.stringify(header)).toBe(parseCookie(header)[cookie]);
      }
    }
  });
});

/** What a cache charges one entry of this credential and value (read off a cache that holds only it). */
function entryBytes<V extends { sessionId: string }>(credential: string, value: V, sizeOf?: (value: V) => number): number {
  const cache = new SessionCache<V>({ sizeOf });
  cache.set(credential, 'portal', value, cache.generation);
  return cache.stats.bytes;
}

describe('session cache', () => {
  const value = (sessionId: string) => ({ sessionId });

  it('answers a credential only in the scope it was stored for', () => {
    const cache = new SessionCache<{ sessionId: string }>();
    cache.set('token-a', 'https://app.example.com', value('s1'), cache.generation);
    expect(cache.get('token-a', 'https://app.example.com')).toEqual(value('s1'));
    expect(cache.get('token-a', 'https://other.example.com')).toBeUndefined();
    expect(cache.get('token-a', 'portal')).toBeUndefined();
    // Another scope storing the same credential replaces the entry; the first scope then misses.
    cache.set('token-a', 'portal', value('s2'), cache.generation);
    expect(cache.get('token-a', 'https://app.example.com')).toBeUndefined();
    expect(cache.get('token-a', 'portal')).toEqual(value('s2'));
    expect(cache.size).toBe(1);
  });

  it('drops every entry of a session on invalidate, and expires entries after the ttl', () => {
    let now = 1_000;
    const cache = new SessionCache<{ sessionId: string }>({ ttlMs: 60_000, now: () => now });
    cache.set('portal-secret', 'portal', value('s1'), cache.generation);
    cache.set('app-token', 'https://app.example.com', value('s1'), cache.generation);
    cache.set('other', 'portal', value('s2'), cache.generation);
    cache.invalidate('s1');
    expect(cache.get('portal-secret', 'portal')).toBeUndefined();
    expect(cache.get('app-token', 'https://app.example.com')).toBeUndefined();
    expect(cache.get('other', 'portal')).toEqual(value('s2'));
    now += 60_000;
    expect(cache.get('other', 'portal')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('updates in place only for the same scope and session, keeping the age', () => {
    let now = 0;
    const cache = new SessionCache<{ sessionId: string; seen?: number }>({ ttlMs: 60_000, now: () => now });
    cache.set('t', 'portal', { sessionId: 's1' }, cache.generation);
    now = 30_000;
    cache.update('t', 'https://app.example.com', { sessionId: 's1', seen: 1 });
    cache.update('t', 'portal', { sessionId: 's9', seen: 2 });
    expect(cache.get('t', 'portal')).toEqual({ sessionId: 's1' });
    cache.update('t', 'portal', { sessionId: 's1', seen: 3 });
    expect(cache.get('t', 'portal')).toEqual({ sessionId: 's1', seen: 3 });
    now = 60_000;
    expect(cache.get('t', 'portal')).toBeUndefined();
  });

  it('stays bounded, evicting the oldest entry first', () => {
    // A budget of two entries' size (every entry the same size here).
    const cache = new SessionCache<{ sessionId: string }>({ maxBytes: 2 * entryBytes('a', value('s1')) });
    cache.set('a', 'portal', value('s1'), cache.generation);
    cache.set('b', 'portal', value('s2'), cache.generation);
    cache.set('c', 'portal', value('s3'), cache.generation);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 'portal')).toBeUndefined();
    expect(cache.get('c', 'portal')).toEqual(value('s3'));
    // The evicted entry's session index is cleaned up too: invalidating it is harmless.
    cache.invalidate('s1');
    expect(cache.size).toBe(2);
  });

  it('refuses to store a value loaded before an invalidation or clear (generation check)', () => {
    // Threat: a session revoked while it was being read from the database is cached after the
    // revocation's invalidate ran, and served until the ttl.
    const cache = new SessionCache<{ sessionId: string }>();
    const before = cache.generation;
    cache.invalidate('s1');
    expect(cache.set('t', 'portal', value('s1'), before)).toBe(false);
    expect(cache.get('t', 'portal')).toBeUndefined();
    const beforeClear = cache.generation;
    cache.clear();
    expect(cache.set('t', 'portal', value('s1'), beforeClear)).toBe(false);
    expect(cache.set('t', 'portal', value('s1'), cache.generation)).toBe(true);
    expect(cache.get('t', 'portal')).toEqual(value('s1'));
  });

  describe('memory budget', () => {
    /** Values whose charge is their `size`, so that a test says exactly what each entry costs. */
    interface Sized {
      sessionId: string;
      size: number;
    }
    const sized = (sessionId: string, size: number): Sized => ({ sessionId, size });
    const sizeOf = (value: Sized) => value.size;
    /** What a one-character credential adds to a value's size: the cache's own structures and the key. */
    const overhead = entryBytes('a', sized('s', 0), sizeOf);

    it('evicts by size, not by count: a large entry takes the room of several small ones', () => {
      const small = overhead + 1_000;
      const cache = new SessionCache<Sized>({ maxBytes: 4 * small, sizeOf });
      for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 'portal', sized(`s-${key}`, 1_000), cache.generation);
      expect(cache.stats).toMatchObject({ entries: 4, bytes: 4 * small, evictions: { budget: 0 } });
      // Three small entries' worth: the three oldest go, the newest small one stays.
      cache.set('e', 'portal', sized('s-e', 3 * small - overhead), cache.generation);
      expect(cache.stats).toMatchObject({ entries: 2, bytes: 4 * small, evictions: { budget: 3, ttl: 0, invalidation: 0 } });
      for (const key of ['a', 'b', 'c']) expect(cache.get(key, 'portal')).toBeUndefined();
      expect(cache.get('d', 'portal')).toEqual(sized('s-d', 1_000));
      expect(cache.get('e', 'portal')?.sessionId).toBe('s-e');
      // The evicted entries' session index is gone too: invalidating one of them drops nothing else.
      cache.invalidate('s-a');
      expect(cache.stats).toMatchObject({ entries: 2, evictions: { invalidation: 0 } });
    });

    it('stores no entry larger than the whole budget, and says the value was current all the same', () => {
      const cache = new SessionCache<Sized>({ maxBytes: overhead + 1_000, sizeOf });
      cache.set('a', 'portal', sized('s1', 500), cache.generation);
      // true: no invalidation intervened, the caller may answer with the value (it is just not kept).
      expect(cache.set('b', 'portal', sized('s2', 5_000), cache.generation)).toBe(true);
      expect(cache.get('b', 'portal')).toBeUndefined();
      // Nothing was evicted for it: it could never have fitted.
      expect(cache.get('a', 'portal')?.sessionId).toBe('s1');
      expect(cache.stats).toMatchObject({ entries: 1, bytes: overhead + 500, evictions: { budget: 1 } });
    });

    it('reads the budget at each store: a lower one (a reload) drops the oldest at the next store', () => {
      let budget = 10 * (overhead + 100);
      const cache = new SessionCache<Sized>({ maxBytes: () => budget, sizeOf });
      for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, 'portal', sized(`s-${key}`, 100), cache.generation);
      expect(cache.stats).toMatchObject({ entries: 5, maxBytes: budget });
      budget = 2 * (overhead + 100);
      cache.set('f', 'portal', sized('s-f', 100), cache.generation);
      expect(cache.stats).toMatchObject({ entries: 2, bytes: budget, maxBytes: budget, evictions: { budget: 4 } });
      expect(cache.get('e', 'portal')?.sessionId).toBe('s-e');
      expect(cache.get('f', 'portal')?.sessionId).toBe('s-f');
    });

    it('charges an update its new size, keeping within the budget', () => {
      const cache = new SessionCache<Sized>({ maxBytes: 3 * (overhead + 100), sizeOf });
      for (const key of ['a', 'b', 'c']) cache.set(key, 'portal', sized(`s-${key}`, 100), cache.generation);
      cache.update('c', 'portal', sized('s-c', 150));
      // 50 bytes over: the oldest goes.
      expect(cache.stats).toMatchObject({ entries: 2, bytes: 2 * overhead + 250, evictions: { budget: 1 } });
      expect(cache.get('a', 'portal')).toBeUndefined();
      cache.update('c', 'portal', sized('s-c', 10));
      expect(cache.stats).toMatchObject({ entries: 2, bytes: 2 * overhead + 110 });
    });

    it('drops entries past their ttl at the next store, not only when they are looked up', () => {
      let now = 0;
      const cache = new SessionCache<Sized>({ ttlMs: 60_000, now: () => now, sizeOf });
      cache.set('a', 'portal', sized('s1', 100), cache.generation);
      cache.set('b', 'portal', sized('s2', 100), cache.generation);
      now = 30_000;
      cache.set('c', 'portal', sized('s3', 100), cache.generation);
      now = 60_000;
      // a and b are 60 s old, c is not: the store drops the two, unread.
      cache.set('d', 'portal', sized('s4', 100), cache.generation);
      expect(cache.stats).toMatchObject({ entries: 2, bytes: 2 * (overhead + 100), evictions: { ttl: 2, budget: 0 } });
      now = 90_000;
      // A lookup finds c expired (counted once, as a miss).
      expect(cache.get('c', 'portal')).toBeUndefined();
      expect(cache.stats).toMatchObject({ entries: 1, evictions: { ttl: 3 }, hits: 0, misses: 1 });
    });

    it('counts what it holds, its lookups and its evictions by reason', () => {
      let now = 0;
      const cache = new SessionCache<Sized>({ maxBytes: 3 * (overhead + 100), ttlMs: 60_000, now: () => now, sizeOf });
      cache.set('a', 'portal', sized('s1', 100), cache.generation);
      cache.set('b', 'https://app.example.com', sized('s1', 100), cache.generation);
      cache.set('c', 'portal', sized('s2', 100), cache.generation);
      cache.set('d', 'portal', sized('s3', 100), cache.generation); // a goes: budget
      expect(cache.get('b', 'https://app.example.com')?.sessionId).toBe('s1');
      expect(cache.get('b', 'portal')).toBeUndefined();
      expect(cache.get('a', 'portal')).toBeUndefined();
      cache.invalidate('s1'); // b
      now = 60_000;
      expect(cache.get('c', 'portal')).toBeUndefined(); // ttl
      now = 0;
      cache.set('e', 'portal', sized('s4', 100), cache.generation);
      cache.clear(); // d and e
      expect(cache.stats).toEqual({
        hits: 1,
        misses: 3,
        entries: 0,
        bytes: 0,
        maxBytes: 3 * (overhead + 100),
        evictions: { budget: 1, ttl: 1, invalidation: 3 },
      });
    });

    it('keeps the generation check whatever it evicts: only an invalidation refuses a store', () => {
      // Threat: a session revoked while it was being read is cached after the revocation; eviction must
      // neither stand in for the invalidation nor bump the generation (which would only refuse stores).
      const cache = new SessionCache<Sized>({ maxBytes: overhead + 100, sizeOf });
      const before = cache.generation;
      cache.set('a', 'portal', sized('s1', 100), before);
      expect(cache.set('b', 'portal', sized('s2', 100), before)).toBe(true); // a evicted by the budget
      expect(cache.generation).toBe(before);
      cache.invalidate('s-none');
      expect(cache.set('c', 'portal', sized('s3', 100), before)).toBe(false);
      expect(cache.get('c', 'portal')).toBeUndefined();
      expect(cache.get('b', 'portal')?.sessionId).toBe('s2');
    });

    it('stores entries of the default estimate whose charge follows their actual sizes', () => {
      const row = (token: string, groups: string[]) => ({
        sessionId: 'sess-1',
        session: { id: 'sess-1', id_token_enc: token, created_at: Date.now(), revoked_at: null },
        user: { id: 'u1', email: 'ann@example.com', name: 'Ann' },
        identity: { id: 'i1', claims: JSON.stringify({ groups }) },
        claims: { groups, extra: {} },
      });
      const small = entryBytes('t'.repeat(43), row('x'.repeat(900), ['staff']));
      const longer = entryBytes('t'.repeat(43), row('x'.repeat(1_900), ['staff']));
      expect(longer - small).toBe(1_000);
      // A hundred more groups: each is charged twice, in the identity's JSON and in the parsed claims.
      const groups = Array.from({ length: 100 }, (_, index) => `group-${String(index).padStart(3, '0')}`);
      const manyGroups = entryBytes('t'.repeat(43), row('x'.repeat(900), ['staff', ...groups]));
      expect(manyGroups - small).toBeGreaterThan(100 * (2 * 'group-000'.length));
      expect(small).toBeGreaterThan(ENTRY_OVERHEAD + 900);
    });
  });
});

describe('estimateBytes', () => {
  it('charges a string its characters (in words), twice for any above U+00FF, and a header', () => {
    expect(estimateBytes('a'.repeat(1_000)) - estimateBytes('a'.repeat(600))).toBe(400);
    expect(estimateBytes('a'.repeat(1_001))).toBe(estimateBytes('a'.repeat(1_008)));
    // Latin-1 (é) is one byte a character in V8, as ASCII is; 東 makes the whole string two-byte.
    expect(estimateBytes('é'.repeat(1_000))).toBe(estimateBytes('a'.repeat(1_000)));
    expect(estimateBytes('東'.repeat(1_000)) - estimateBytes('a'.repeat(1_000))).toBe(1_000);
    expect(estimateBytes('')).toBeGreaterThan(0);
  });

  it('charges objects and arrays a slot per member, and boxed numbers beyond small integers', () => {
    expect(estimateBytes({ a: 1, b: 2 }) - estimateBytes({ a: 1 })).toBe(8);
    expect(estimateBytes([1, 2, 3]) - estimateBytes([1, 2])).toBe(8);
    expect(estimateBytes({ at: 1_767_225_600_000 }) - estimateBytes({ at: 1 })).toBe(16);
    expect(estimateBytes({ nested: { s: 'x'.repeat(100) } })).toBeGreaterThan(100);
    expect(estimateBytes(null) + estimateBytes(true) + estimateBytes(undefined)).toBe(0);
  });
});

describe('session cache metrics', () => {
  it('exports lookups, entries, estimated bytes, the budget and evictions by reason', async () => {
    const cache = new SessionCache<{ sessionId: string }>({ maxBytes: 1_000_000 });
    cache.set('a', 'portal', { sessionId: 's1' }, cache.generation);
    cache.set('b', 'portal', { sessionId: 's2' }, cache.generation);
    cache.get('a', 'portal');
    cache.get('a', 'portal');
    cache.get('z', 'portal');
    cache.invalidate('s2');
    const { registry, readFrom } = createMetrics();
    readFrom({ sessionCache: () => cache.stats });
    const text = await registry.metrics();
    const sample = (line: string) => expect(text.split('\n')).toContain(line);
    sample('gatehouse_session_cache_lookups_total{result="hit"} 2');
    sample('gatehouse_session_cache_lookups_total{result="miss"} 1');
    sample('gatehouse_session_cache_entries 1');
    sample(`gatehouse_session_cache_bytes ${cache.stats.bytes}`);
    sample('gatehouse_session_cache_max_bytes 1000000');
    sample('gatehouse_session_cache_evictions_total{reason="budget"} 0');
    sample('gatehouse_session_cache_evictions_total{reason="ttl"} 0');
    sample('gatehouse_session_cache_evictions_total{reason="invalidation"} 1');
    expect(cache.stats.bytes).toBeGreaterThan(0);
  });
});
