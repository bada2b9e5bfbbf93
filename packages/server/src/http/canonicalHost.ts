import { endpoints, oidcEndpoints, routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isLoopbackHost } from '../config/loopback.js';
import { AppError } from '../errors.js';
import { PAGE_SECURITY_HEADERS } from './html.js';

export interface CanonicalHostOptions {
  /** The portal's origin (`publicUrl`), e.g. http://localhost:4180. */
  portalOrigin: string;
  /** The port Gatehouse listens on: on loopback, its addresses there are the portal too. */
  listenPort: number;
  /** Forward-auth's endpoints (proxy/forwardAuth.ts): a proxy asks them under any name. */
  isForwardAuth: (url: string) => boolean;
}

/** What to do with a portal request, by its Host: serve it, send it to the portal's own address, or refuse it. */
export type HostVerdict = 'portal' | 'alias' | 'unknown';

/**
 * The Host values that are the portal under another name: only when `publicUrl` is a loopback URL,
 * the loopback names and addresses (localhost, 127.0.0.1, [::1]) at its port and at the listening
 * port — what `npm start` prints and what a person types. Anything else is unknown: Gatehouse answers
 * only at names it was told about.
 */
export function portalHosts({ portalOrigin, listenPort }: CanonicalHostOptions): { canonical: ReadonlySet<string>; aliases: ReadonlySet<string> } {
  const portal = new URL(portalOrigin);
  const defaultPort = portal.protocol === 'https:' ? '443' : '80';
  const canonical = new Set([portal.host.toLowerCase(), `${portal.hostname.toLowerCase()}:${portal.port || defaultPort}`]);
  const aliases = new Set<string>();
  if (isLoopbackHost(portal.hostname)) {
    for (const port of new Set([portal.port || defaultPort, String(listenPort)])) {
      for (const name of ['localhost', '127.0.0.1', '[::1]']) aliases.add(`${name}:${port}`);
      if (port === defaultPort) for (const name of ['localhost', '127.0.0.1', '[::1]']) aliases.add(name);
    }
    for (const host of canonical) aliases.delete(host);
  }
  return { canonical, aliases };
}

/**
 * Addresses that answer on any Host, as they did before: a load balancer's or an orchestrator's health
 * probes (sent to a node's own address), forward-auth (a proxy asks it under Gatehouse's internal
 * name), the JWKS (apps may fetch it over an internal address) and back-channel logout (an IdP posts
 * it, authenticated by its signed token), and the OpenID Provider's server-to-server endpoints. None
 * of them starts a sign-in or sets a cookie.
 */
export function answersOnAnyHost(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  return (
    path === routes.operations.getHealth.path ||
    path === routes.operations.getReadiness.path ||
    path === routes.operations.getJwks.path ||
    path.startsWith(BACKCHANNEL_LOGOUT) ||
    SERVER_TO_SERVER_OP.has(path)
  );
}

/**
 * The OpenID Provider's endpoints apps call server to server (an app in a container reaches Gatehouse
 * by an internal name): discovery, token, userinfo, JWKS, introspection, revocation and PAR. Exactly
 * these paths: the authorization endpoint, the login step and logout, which a browser reaches and
 * which set cookies, stay on the portal's name. Every URL the OP writes is the issuer's whatever the
 * Host (provide/forwarded.ts).
 */
const SERVER_TO_SERVER_OP: ReadonlySet<string> = new Set([
  oidcEndpoints.discovery,
  oidcEndpoints.token,
  oidcEndpoints.userinfo,
  oidcEndpoints.jwks,
  oidcEndpoints.introspection,
  oidcEndpoints.revocation,
  oidcEndpoints.pushedAuthorizationRequest,
]);

const BACKCHANNEL_LOGOUT = endpoints.backchannelLogout.slice(0, endpoints.backchannelLogout.indexOf(':'));

/**
 * Where an alias's request goes: the same path and query at the portal's origin. Never a host from
 * the request: the origin is `publicUrl`'s, and the request target (a path, checked by the dispatcher)
 * is appended to it, so "//evil.example" stays a path of the portal. The WHATWG parser normalises the
 * path as the browser will (dot segments, characters a Location cannot carry percent-encoded); a
 * result on another origin is refused rather than followed.
 */
export function canonicalLocation(portalOrigin: string, url: string): string | undefined {
  if (!url.startsWith('/')) return undefined;
  let target: URL;
  try {
    target = new URL(`${portalOrigin}${url}`);
  } catch {
    return undefined;
  }
  return target.origin === portalOrigin ? target.href : undefined;
}

/**
 * The portal answers at `publicUrl`'s host only. Its cookies (the session, the sign-in binding) are
 * host-only cookies of that host and every redirect URI is built from it, so a sign-in started at
 * another name (http://127.0.0.1:4180 for http://localhost:4180) could only end in "Sign-in expired":
 * a navigation to a known alias is sent to the same path at `publicUrl` before anything is set (a
 * temporary redirect: nothing is cached for good); an unknown host, or anything but a navigation at an
 * alias, gets a page saying so (421 `unknown_host`), never the portal. The Host header is read as the app hosts read it (the app
 * registry routes by it too); X-Forwarded-Host is not, so no header a client sets chooses a host.
 * Registered first, before any route.
 */
export const canonicalHost = fp(
  async function canonicalHostPlugin(app: FastifyInstance, options: CanonicalHostOptions) {
    const { canonical, aliases } = portalHosts(options);
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const verdict = hostVerdict(request.headers.host, canonical, aliases);
      if (verdict === 'portal' || answersOnAnyHost(request.url) || options.isForwardAuth(request.url)) return;
      // Only a navigation is sent on: no page of the portal is ever served at an alias, so a form post
      // or an API call there comes from elsewhere, and is refused with nothing done.
      const navigation = request.method === 'GET' || request.method === 'HEAD';
      const location = verdict === 'alias' && navigation ? canonicalLocation(options.portalOrigin, request.url) : undefined;
      if (location) {
        request.log.debug({ host: request.headers.host, location }, 'portal alias: sent to publicUrl');
        return reply.headers(PAGE_SECURITY_HEADERS).header('cache-control', 'no-store').redirect(location, 307);
      }
      throw new AppError('unknown_host', { params: { portal: `${options.portalOrigin}/` }, retryUrl: `${options.portalOrigin}/`, retryLabel: 'Go to Gatehouse' });
    });
  },
  { name: 'gatehouse-canonical-host' },
);

export function hostVerdict(host: string | undefined, canonical: ReadonlySet<string>, aliases: ReadonlySet<string>): HostVerdict {
  const name = host?.toLowerCase() ?? '';
  if (canonical.has(name)) return 'portal';
  return aliases.has(name) ? 'alias' : 'unknown';
}
