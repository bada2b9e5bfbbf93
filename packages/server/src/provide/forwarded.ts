import type { FastifyRequest } from 'fastify';

/**
 * What oidc-provider (Koa) sees of where a request came from. Koa believes X-Forwarded-* only with
 * `proxy` on, and then wholesale, from anyone: so `proxy` is on and every one of those headers is
 * written here, never passed on. The host and scheme are always `publicUrl`'s (every URL the OP builds
 * — its endpoints in discovery, redirects, the audiences it accepts in client assertions — is on the
 * issuer, whatever name an app in a container called it by); the client's address is the one Fastify
 * judged by the house's trusted-proxy rule (`trustedProxies`), one value, never a client's list.
 */
export function asIssuerSees(request: FastifyRequest, portalOrigin: string): void {
  const portal = new URL(portalOrigin);
  // Read before the headers change: Fastify works request.ip out from X-Forwarded-For at each read, and
  // without it, it is the proxy's address (which everyone behind the proxy would share).
  const client = request.ip;
  const headers = request.raw.headers;
  for (const name of Object.keys(headers)) if (name.startsWith('x-forwarded-') || name === 'forwarded') delete headers[name];
  headers['x-forwarded-host'] = portal.host;
  headers['x-forwarded-proto'] = portal.protocol.slice(0, -1);
  // From a trusted proxy, this one value is the client again when Fastify reads it (request.ip after this).
  headers['x-forwarded-for'] = client;
}
