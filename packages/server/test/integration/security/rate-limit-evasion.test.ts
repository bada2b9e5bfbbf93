import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalAddress, rateLimitKey } from '../../../src/http/trustedProxies.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';

// Threat: brute force of the sign-in endpoints past their per-address budget by rotating the spelling
// of one client address. Behind a trusted proxy the client address comes from X-Forwarded-For; when
// the budget was keyed by that raw text, `1.2.3.4:1`, `1.2.3.4:2` (proxies such as Azure Application
// Gateway write the client's source port), `[1.2.3.4]`, `::ffff:1.2.3.4`, IPv6 case and zero
// compression, or the other 2^64 addresses of one IPv6 /64 were each a fresh budget.

const MAX = 3;
let gatehouse: RunningGatehouse;

beforeAll(async () => {
  gatehouse = await startGatehouse({
    signIn: { rateLimit: { max: MAX, window: '1m' } },
    // The test's own connections play the trusted proxy.
    trustedProxies: ['127.0.0.1', '::1'],
    providers: [{ id: 'gone', name: 'Gone IdP', issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x', clientSecret: 'y' }],
  });
});
afterAll(() => gatehouse?.close());

/** A sign-in callback (it shares the sign-in budget) from a client the proxy names as `forwardedFor`. */
async function callbackFrom(forwardedFor: string): Promise<number> {
  const response = await fetch(`${gatehouse.url}/.gatehouse/callback/gone?state=x&code=y`, { redirect: 'manual', headers: { 'x-forwarded-for': forwardedFor } });
  await response.arrayBuffer();
  return response.status;
}

/** Spends the budget with the given spellings of one client, then expects the next spelling to be refused. */
async function expectOneBudget(spellings: string[]): Promise<void> {
  const statuses: number[] = [];
  for (const spelling of spellings) statuses.push(await callbackFrom(spelling));
  expect(statuses.slice(0, MAX), spellings.join(' | ')).toEqual(Array(MAX).fill(400));
  expect(statuses.slice(MAX), spellings.join(' | ')).toEqual(Array(spellings.length - MAX).fill(429));
}

describe('one budget per client, however its address is spelled', () => {
  it('IPv4 with ports, brackets and as IPv4-mapped IPv6', async () => {
    await expectOneBudget(['198.51.100.7:1', '198.51.100.7:2', '[198.51.100.7]:3', '::ffff:198.51.100.7', '[::FFFF:198.51.100.7]:443', '198.51.100.7']);
  });

  it('IPv6 in any case or zero compression, with or without brackets and port', async () => {
    await expectOneBudget(['2001:db8:aa::1', '2001:DB8:AA:0:0:0:0:1', '[2001:db8:aa::1]:8443', '2001:0db8:00aa::0001']);
  });

  it('every address of one IPv6 /64', async () => {
    await expectOneBudget(['2001:db8:bb:1::1', '2001:db8:bb:1:ffff::2', '2001:db8:bb:1:1234:5678:9abc:def0', '[2001:db8:bb:1::99]:1']);
  });

  it('whatever is not an address shares one budget', async () => {
    await expectOneBudget(['unknown', 'nonsense-1', '0x7f.1', '01.2.3.4', '1.2.3.4.']);
  });

  it('while another client keeps its own budget', async () => {
    expect(await callbackFrom('203.0.113.9')).toBe(400);
    expect(await callbackFrom('2001:db8:cc:2::1')).toBe(400);
  });
});

describe('canonicalAddress and rateLimitKey', () => {
  it('give every spelling of an IPv4 address the same key', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), fc.integer({ min: 0, max: 65535 }), (parts, port) => {
        const v4 = parts.join('.');
        const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
        const spellings = [v4, `${v4}:${port}`, `[${v4}]:${port}`, `::ffff:${v4}`, `::FFFF:${hex(parts[0], parts[1])}:${hex(parts[2], parts[3])}`, ` ${v4} `];
        for (const spelling of spellings) {
          expect(canonicalAddress(spelling), spelling).toBe(v4);
          expect(rateLimitKey(spelling), spelling).toBe(v4);
        }
      }),
    );
  });

  it('key IPv6 by its /64 and never merge two /64s', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.array(group, { minLength: 4, maxLength: 4 }), (groups, otherHost) => {
        const full = groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
        const sameNet = [...groups.slice(0, 4), ...otherHost].map((g) => g.toString(16)).join(':');
        expect(rateLimitKey(full)).toBe(rateLimitKey(sameNet));
        expect(rateLimitKey(`[${full.toUpperCase()}]:80`)).toBe(rateLimitKey(full));
        const otherNet = [...groups.slice(0, 3), (groups[3]! + 1) % 0x10000, ...groups.slice(4)].map((g) => g.toString(16)).join(':');
        // ::ffff:0:0/96 is IPv4-mapped: not a /64 of its own.
        if (!canonicalAddress(full)!.includes('.')) expect(rateLimitKey(otherNet)).not.toBe(rateLimitKey(full));
      }),
    );
  });
});
