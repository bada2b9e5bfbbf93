import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
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
