import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { originOf } from './appRegistry.js';
import { trustedProxyCheck } from '../http/trustedProxies.js';
import { checkAccess } from './checkAccess.js';
import { sendDeniedPage } from './deniedResponse.js';
import { identityHeaders } from './identityHeaders.js';

type Mode = 'auth_request' | 'redirect';

/**
 * Forward-auth for proxies people already run. `/.gatehouse/auth` follows nginx `auth_request`: 2xx with
 * identity headers, 401 or 403, never a redirect. `/.gatehouse/forward-auth` follows Traefik
 * `forwardAuth` and Caddy `forward_auth`: the same, except a signed-out browser is redirected to sign in.
 * The original request is read from X-Forwarded-* only when the peer is a trusted proxy; an unknown
 * forwarded host is 403. Every identity header is always in the answer (empty when not applicable) so
 * the proxy overwrites whatever the client sent.
 */
export async function forwardAuthRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const isTrusted = trustedProxyCheck(services.config.trustedProxies);
  const { apps, cookies } = services;
  const forbidden = identityHeaders(undefined);

  const handler = (mode: Mode) =>
    async function forwardAuth(request: FastifyRequest, reply: FastifyReply) {
      reply.header('cache-control', 'no-store');
      const original = isTrusted(request.socket.remoteAddress) ? forwardedRequest(request) : undefined;
      const app = original ? apps.forHost(original.host) : undefined;
      if (!original || !app || original.origin !== originOf(app)) {
        return reply.status(403).headers(forbidden).send();
      }
      const result = await checkAccess(services, request, {
        app,
        appOrigin: original.origin,
        method: original.method,
        path: original.uri,
        token: request.cookies[cookies.appSession],
        preflight: original.method === 'OPTIONS',
      });
      reply.headers(result.headers);
      switch (result.kind) {
        case 'public':
        case 'allowed':
          return reply.status(200).send();
        case 'denied':
          // Traefik and Caddy pass this answer on to the browser: make it a page a person understands.
          if (mode === 'redirect' && isBrowserNavigation(original.method, request.headers.accept)) {
            return sendDeniedPage(services, request, reply, { app, email: result.current.user.email, url: `${original.origin}${original.uri}` });
          }
          return reply.status(403).send();
        case 'unauthenticated':
          if (mode === 'redirect' && isBrowserNavigation(original.method, request.headers.accept)) {
            const start = `${original.origin}${paths.appStart}?rd=${encodeURIComponent(`${original.origin}${original.uri}`)}`;
            return reply.redirect(start, 302);
          }
          return reply.status(401).send();
      }
    };

  // The hot path of every request behind a proxy: logged at warn only, and without the security
  // headers meant for pages (the proxy never shows this answer's headers to a browser as a page).
  const hot = { logLevel: 'warn', helmet: false } as const;
  app.get(paths.forwardAuth, hot, handler('auth_request'));
  app.get(paths.forwardAuthRedirect, hot, handler('redirect'));
}

interface ForwardedRequest {
  origin: string;
  host: string;
  method: string;
  uri: string;
}

function forwardedRequest(request: FastifyRequest): ForwardedRequest | undefined {
  const proto = single(request.headers['x-forwarded-proto'])?.toLowerCase();
  const host = single(request.headers['x-forwarded-host'])?.toLowerCase();
  const uri = single(request.headers['x-forwarded-uri']) ?? single(request.headers['x-original-uri']) ?? '/';
  const method = (single(request.headers['x-forwarded-method']) ?? 'GET').toUpperCase();
  if ((proto !== 'http' && proto !== 'https') || !host || !/^[a-z0-9.-]+(:\d{1,5})?$/.test(host) || !uri.startsWith('/')) return undefined;
  // URL drops a default port (":443" for https), as browsers do in Origin.
  const origin = new URL(`${proto}://${host}`).origin;
  return { origin, host: new URL(origin).host, method, uri };
}

/** The first value of a header a proxy may have sent as a list. */
function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(',')[0]?.trim() || undefined;
}

export function isBrowserNavigation(method: string, accept: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && (accept ?? '').includes('text/html');
}
