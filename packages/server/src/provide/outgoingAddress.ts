import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { buildConnector } from 'undici';

/**
 * Where Gatehouse may open a connection to an app of its own accord (back-channel logout): the address
 * guard. An app registers its back-channel URI in the configuration or the console, so an admin
 * chooses it; but whoever may edit an app, or control an app's DNS, must not be able to turn Gatehouse
 * into a client of what only the host itself should reach (server-side request forgery).
 *
 * Allowed: public addresses, and the private and loopback ones (10/8, 172.16/12, 192.168/16, 127/8,
 * fc00::/7, ::1), where self-hosted apps live; oidc-provider's own guard refuses exactly those, which is
 * why Gatehouse posts logout tokens itself. Refused: the addresses that are no app's: "this network",
 * link-local (169.254/16 holds the cloud metadata services of AWS, GCP, Azure and OpenStack), the
 * metadata addresses outside it (Alibaba's 100.100.100.200, AWS's IPv6 fd00:ec2::254), multicast,
 * broadcast and the reserved block. The rest of 100.64/10 stays allowed: Tailscale and other overlay
 * networks put self-hosted apps there.
 *
 * The decision is taken on the address the socket connects to, at connect time (the lookup hands the
 * socket only addresses that passed), never on a name resolved earlier: a name that answers a harmless
 * address when checked and the metadata address when connected (DNS rebinding) cannot slip past.
 */

/** The refused IPv4 ranges; each also refused inside IPv6 forms that reach it (mapped, NAT64). */
const REFUSED_IPV4: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, '"this network" (0.0.0.0 reaches the host itself)'],
  ['169.254.0.0', 16, 'link-local (cloud metadata: 169.254.169.254)'],
  ['100.100.100.200', 32, 'a cloud metadata service (Alibaba Cloud)'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved and broadcast'],
];
const REFUSED_IPV6: ReadonlyArray<[string, number, string]> = [
  ['::', 128, 'the unspecified address'],
  ['fe80::', 10, 'link-local'],
  ['fd00:ec2::254', 128, 'a cloud metadata service (AWS)'],
  ['ff00::', 8, 'multicast'],
];

/** One refused range, in a BlockList of its own so that a refusal can say which. */
const RULES: ReadonlyArray<{ list: BlockList; why: string }> = [
  ...REFUSED_IPV4.map(([network, prefix, why]) => {
    const list = new BlockList();
    // BlockList also matches an IPv4 rule for its IPv4-mapped IPv6 form (::ffff:169.254.169.254).
    list.addSubnet(network, prefix, 'ipv4');
    // NAT64's well-known prefix (RFC 6052) embeds an IPv4 address in the last 32 bits: 64:ff9b::a9fe:a9fe.
    const [a, b, c, d] = network.split('.').map(Number) as [number, number, number, number];
    list.addSubnet(`64:ff9b::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`, 96 + prefix, 'ipv6');
    return { list, why };
  }),
  ...REFUSED_IPV6.map(([network, prefix, why]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, 'ipv6');
    return { list, why };
  }),
];

/** Why an IP address is refused, or undefined when Gatehouse may connect to it. Anything not an IP is refused. */
export function refusedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RULES.find((rule) => rule.list.check(address, type))?.why;
}

/** A connection the guard refused: its message names the address and why, never more of the URL. */
export class RefusedAddressError extends Error {
  readonly code = 'ADDRESS_REFUSED';
  constructor(host: string, address: string, why: string) {
    super(host === address ? `refused to connect to ${address}: ${why}` : `refused to connect to ${host} (${address}): ${why}`);
    this.name = 'RefusedAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Every address of a name (the system's resolver: /etc/hosts, then DNS). */
export type Resolve = (hostname: string, options: LookupOptions) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname, options) => dns.lookup(hostname, { ...options, all: true });

/**
 * A `lookup` for net.connect and tls.connect: resolves as usual, and refuses the name when any of its
 * addresses is refused (fail closed: a name that answers one harmless and one metadata address is not
 * tried address by address). Answers in the form the socket asked for (`all` when it tries several
 * families, Node's autoSelectFamily).
 */
export function guardedLookup(resolve: Resolve = systemResolve) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, options).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        for (const { address } of addresses) {
          const why = refusedAddress(address);
          if (why) return callback(new RefusedAddressError(hostname, address, why), []);
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

/**
 * undici's connector with the guard: a host that is an IP literal is judged here (a socket does not
 * look an IP up), a name by `guardedLookup` as the socket connects. Every connection of an Agent built
 * with it passes through the guard, whatever URL asked for it.
 */
export function guardedConnector(options: { timeout: number; resolve?: Resolve | undefined }): buildConnector.connector {
  const connect = buildConnector({ timeout: options.timeout, lookup: guardedLookup(options.resolve) });
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.startsWith('[') ? connectOptions.hostname.slice(1, -1) : connectOptions.hostname;
    if (isIP(host) !== 0) {
      const why = refusedAddress(host);
      if (why) return callback(new RefusedAddressError(host, host, why), null);
    }
    return connect(connectOptions, callback);
  };
}
