import { parseCookie } from 'cookie';
import { describe, expect, it } from 'vitest';
import { cookieValue } from '../src/sessions/cookies.js';
import { SessionCache } from '../src/sessions/sessionCache.js';

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
    const cache = new SessionCache<{ sessionId: string }>(10, 60_000, () => now);
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
    const cache = new SessionCache<{ sessionId: string; seen?: number }>(10, 60_000, () => now);
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
    const cache = new SessionCache<{ sessionId: string }>(2);
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
});
