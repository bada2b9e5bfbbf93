import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';

/**
 * Whether the peer that connected to us is one of the configured trusted proxies: only then are its
 * X-Forwarded-* headers believed (PRODUCT.md "Cookies and trust"). With none configured, nobody is.
 */
export function trustedProxyCheck(trustedProxies: readonly string[]): (remoteAddress: string | undefined) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trust = compiledTrust(trustedProxies);
  return (remoteAddress) => remoteAddress !== undefined && trust(remoteAddress);
}

/**
 * The configured CIDR list as a function of an address, remembering its answers: the same few proxy
 * addresses ask on every request, and parsing an address costs more than the rest of a forward-auth
 * check. Bounded, and cleared when full.
 */
function compiledTrust(trustedProxies: readonly string[]): (address: string) => boolean {
  const trust = proxyAddr.compile([...trustedProxies]);
  const known = new Map<string, boolean>();
  return (address) => {
    let trusted = known.get(address);
    if (trusted === undefined) {
      trusted = trust(address, 0);
      if (known.size >= 1_000) known.clear();
      known.set(address, trusted);
    }
    return trusted;
  };
}

/**
 * The X-Forwarded-For an upstream receives: the peer's address added to the list a trusted proxy sent,
 * or the peer's address alone. A list from anyone else is only the client's word, and is dropped (as
 * Traefik does), so that an app reading the first entry cannot be handed a made-up address.
 */
export function forwardedForOf(trustedProxies: readonly string[]): (request: IncomingMessage) => string {
  const isTrusted = trustedProxyCheck(trustedProxies);
  return (request) => {
    const peer = request.socket.remoteAddress ?? '';
    // Node joins repeated X-Forwarded-For lines with ", " into one string.
    const incoming = request.headers['x-forwarded-for'];
    return incoming && isTrusted(peer) ? `${incoming}, ${peer}` : peer;
  };
}

/**
 * The client's address as Fastify's `request.ip` gives it with the same `trustProxy` list: the peer,
 * or, when the peer is a trusted proxy, the nearest untrusted hop of X-Forwarded-For. For the hot path,
 * which answers on node:http without a Fastify request.
 */
export function clientAddressOf(trustedProxies: readonly string[]): (request: IncomingMessage) => string | undefined {
  if (trustedProxies.length === 0) return (request) => request.socket.remoteAddress;
  const trust = compiledTrust(trustedProxies);
  return (request) => proxyAddr(request, trust);
}

/**
 * The same for a peer address kept apart from its request: a request whose body has been read may have
 * let go of its socket by the time its answer is under way.
 */
export function clientAddressOfPeer(trustedProxies: readonly string[]): (remoteAddress: string | undefined, headers: IncomingHttpHeaders) => string | undefined {
  const of = clientAddressOf(trustedProxies);
  // proxy-addr reads only these two of a request.
  return (remoteAddress, headers) => of({ socket: { remoteAddress }, headers } as unknown as IncomingMessage);
}

/**
 * An address as one canonical string, or undefined when it is not an IP address: brackets and a port
 * dropped (`[2001:db8::1]:443`, `1.2.3.4:5678`, as some proxies write X-Forwarded-For), a zone id
 * dropped, IPv6 in RFC 5952 form (lower case, the longest zero run compressed), and an IPv4-mapped
 * IPv6 address (`::ffff:1.2.3.4`, how a dual-stack socket reports IPv4 peers) as the IPv4 address.
 * IPv4 must be dotted decimal (no octal, hex or shortened forms).
 */
export function canonicalAddress(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let value = raw.trim();
  const bracketed = BRACKETED.exec(value);
  if (bracketed) value = bracketed[1]!;
  else if (IPV4_WITH_PORT.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  const zone = value.indexOf('%');
  if (zone !== -1) value = value.slice(0, zone);
  if (isIPv4(value)) return value;
  if (!isIPv6(value)) return undefined;
  // The URL parser serialises IPv6 hosts in RFC 5952's canonical form.
  const canonical = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  const mapped = IPV4_MAPPED.exec(canonical);
  if (!mapped) return canonical;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The key of a client's sign-in rate-limit budget (PRODUCT.md: 30 a minute per client address): the
 * canonical address, so that spellings of one address (ports, brackets, IPv4-mapped, IPv6 zero
 * compression or case) share one budget; for IPv6 the /64 it belongs to, since one subscriber is given
 * a whole /64 and can use any of its 2^64 addresses. Whatever is not an address (possible only when a
 * trusted proxy passes it on) shares one budget with everything else that is not.
 */
export function rateLimitKey(clientAddress: string | undefined): string {
  const address = canonicalAddress(clientAddress);
  if (address === undefined) return 'not-an-address';
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const groups = head ? head.split(':') : [];
  if (groups.length < 4) {
    // Zeros compressed within the first four groups: fill them back in.
    const rest = tail ? tail.split(':') : [];
    groups.push(...Array<string>(8 - groups.length - rest.length).fill('0'), ...rest);
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

const BRACKETED = /^\[([^\]]*)\](?::\d{1,5})?$/;
const IPV4_WITH_PORT = /^\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}$/;
const IPV4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;
