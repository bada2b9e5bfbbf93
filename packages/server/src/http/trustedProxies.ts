import proxyAddr from '@fastify/proxy-addr';

/**
 * Whether the peer that connected to us is one of the configured trusted proxies: only then are its
 * X-Forwarded-* headers believed (PRODUCT.md "Cookies and trust"). With none configured, nobody is.
 */
export function trustedProxyCheck(trustedProxies: readonly string[]): (remoteAddress: string | undefined) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trust = proxyAddr.compile([...trustedProxies]);
  return (remoteAddress) => remoteAddress !== undefined && trust(remoteAddress, 0);
}
