import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { guardedLookup, refusedAddress } from '../../src/provide/outgoingAddress.js';

/** The outgoing address guard of back-channel logout (provide/outgoingAddress.ts), address by address. */
describe('the outgoing address guard', () => {
  it('allows the addresses self-hosted apps live at: private, loopback, unique local, overlay networks, public', () => {
    for (const address of [
      '10.0.0.1', '10.255.255.254', '172.16.0.1', '172.31.255.255', '192.168.1.10', '127.0.0.1', '127.1.2.3',
      '::1', 'fc00::1', 'fd12:3456::1', '100.64.0.1', '100.100.100.100', '8.8.8.8', '2001:db8::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
    ]) {
      expect(refusedAddress(address), address).toBeUndefined();
    }
  });

  // Threat: server-side request forgery through an app's back-channel URI, to what only the host should reach.
  it('refuses link-local, cloud metadata, "this network", multicast, broadcast and reserved addresses, in every spelling', () => {
    const refused: Record<string, RegExp> = {
      '169.254.169.254': /link-local/,
      '169.254.0.1': /link-local/,
      '::ffff:169.254.169.254': /link-local/,
      '::ffff:a9fe:a9fe': /link-local/,
      '64:ff9b::a9fe:a9fe': /link-local/,
      '64:ff9b::169.254.169.254': /link-local/,
      'fe80::1': /link-local/,
      'FE80::1': /link-local/,
      'febf:ffff::1': /link-local/,
      'fe80::1%lo': /link-local/,
      '100.100.100.200': /metadata/,
      'fd00:ec2::254': /metadata/,
      '0.0.0.0': /this network/,
      '0.1.2.3': /this network/,
      '::ffff:0.0.0.0': /this network/,
      '::': /unspecified/,
      '224.0.0.1': /multicast/,
      '239.255.255.250': /multicast/,
      'ff02::1': /multicast/,
      '255.255.255.255': /broadcast/,
      '240.0.0.1': /reserved/,
      '192.0.0.192': /IETF/,
      localhost: /not an IP/,
      '': /not an IP/,
    };
    for (const [address, why] of Object.entries(refused)) expect(refusedAddress(address), address).toMatch(why);
  });

  it('resolves names with the system resolver and answers in the form the socket asks for', async () => {
    const lookup = guardedLookup();
    const one = await new Promise<[string | LookupAddress[], number | undefined]>((resolve, reject) =>
      lookup('localhost', { family: 4 }, (error, address, family) => (error ? reject(error) : resolve([address, family]))),
    );
    expect(one).toEqual(['127.0.0.1', 4]);
    const all = await new Promise<string | LookupAddress[]>((resolve, reject) => lookup('localhost', { family: 4, all: true }, (error, address) => (error ? reject(error) : resolve(address))));
    expect(all).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  // Threat: a name with one harmless and one metadata address, tried address by address until one connects.
  it('refuses a name when any of its addresses is refused', async () => {
    const lookup = guardedLookup(() => Promise.resolve([{ address: '10.0.0.5', family: 4 }, { address: '169.254.169.254', family: 4 }]));
    const error = await new Promise<Error | null>((resolve) => lookup('app.internal.test', { all: true }, (failure) => resolve(failure)));
    expect(error?.message).toBe('refused to connect to app.internal.test (169.254.169.254): link-local (cloud metadata: 169.254.169.254)');
  });
});
