import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/schema.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { cookieValue } from '../sessions/cookies.js';
import type { ResolveContext } from '../sessions/sessionResolver.js';
import { originOf } from './appRegistry.js';
import { trustedProxyCheck } from '../http/trustedProxies.js';
import { checkAccess, checkAccessNow, type AccessRequest, type AccessResult } from './checkAccess.js';
import { sendDeniedPage } from './deniedResponse.js';
import { identityHeaders } from './identityHeaders.js';

export type ForwardAuthMode = 'auth_request' | 'redirect';

/** What a forward-auth check answers: a status with the identity headers, a redirect, or the 403 page. */
export type ForwardAuthAnswer =
  | { kind: 'status'; status: 200 | 401 | 403; headers: Record<string, string> }
  | { kind: 'redirect'; location: string; headers: Record<string, string> }
  | { kind: 'denied-page'; app: AppConfig; email: string; url: string; headers: Record<string, string> };

export interface ForwardAuthRequest {
  mode: ForwardAuthMode;
  /** The address of the peer that connected (the proxy, when there is one). */
  remoteAddress: string | undefined;
  headers: IncomingHttpHeaders;
  context: ResolveContext;
}

/**
 * Forward-auth for proxies people already run. `/.gatehouse/auth` follows nginx `auth_request`: 2xx with
 * identity headers, 401 or 403, never a redirect. `/.gatehouse/forward-auth` follows Traefik
 * `forwardAuth` and Caddy `forward_auth`: the same, except a signed-out browser is redirected to sign in.
 * The original request is read from X-Forwarded-* only when the peer is a trusted proxy; an unknown
 * forwarded host is 403. Every identity header is always in the answer (empty when not applicable) so
 * the proxy overwrites whatever the client sent.
 *
 * The decision is made here once; the hot path (proxy/hotPath.ts) answers it on node:http, and the
 * Fastify routes below answer it too (requests the hot path leaves to them, and the 403 page).
 */
export interface ForwardAuthCheck {
  /** The answer when it needs no waiting (see checkAccessNow), else undefined: then ask `check`. */
  now(request: Omit<ForwardAuthRequest, 'context'>): ForwardAuthAnswer | undefined;
  check(request: ForwardAuthRequest): Promise<ForwardAuthAnswer>;
}

export function forwardAuthCheck(services: Services): ForwardAuthCheck {
  const isTrusted = trustedProxyCheck(services.config.trustedProxies);
  const { apps, cookies } = services;
  const forbidden: ForwardAuthAnswer = { kind: 'status', status: 403, headers: identityHeaders(undefined) };

  /** The request the proxy asks about, if it comes from a trusted proxy and names a known app. */
  const target = ({ remoteAddress, headers }: Omit<ForwardAuthRequest, 'context' | 'mode'>) => {
    const original = isTrusted(remoteAddress) ? forwardedRequest(headers) : undefined;
    const app = original ? apps.forHost(original.host) : undefined;
    if (!original || !app || original.origin !== originOf(app)) return undefined;
    const access: AccessRequest = {
      app,
      appOrigin: original.origin,
      method: original.method,
      path: original.uri,
      token: cookieValue(headers.cookie, cookies.appSession),
      preflight: original.method === 'OPTIONS',
    };
    return { original, app, access };
  };

  const answer = (mode: ForwardAuthMode, headers: IncomingHttpHeaders, { original, app }: NonNullable<ReturnType<typeof target>>, result: AccessResult): ForwardAuthAnswer => {
    const browser = mode === 'redirect' && isBrowserNavigation(original.method, headers.accept);
    switch (result.kind) {
      case 'public':
      case 'allowed':
        return { kind: 'status', status: 200, headers: result.headers };
      case 'denied':
        // Traefik and Caddy pass this answer on to the browser: make it a page a person understands.
        if (browser) return { kind: 'denied-page', app, email: result.current.user.email, url: `${original.origin}${original.uri}`, headers: result.headers };
        return { kind: 'status', status: 403, headers: result.headers };
      case 'unauthenticated':
        if (browser) {
          const location = `${original.origin}${paths.appStart}?rd=${encodeURIComponent(`${original.origin}${original.uri}`)}`;
          return { kind: 'redirect', location, headers: result.headers };
        }
        return { kind: 'status', status: 401, headers: result.headers };
    }
  };

  return {
    now(request) {
      const found = target(request);
      if (!found) return forbidden;
      const result = checkAccessNow(services, found.access);
      return result ? answer(request.mode, request.headers, found, result) : undefined;
    },
    async check(request) {
      const found = target(request);
      if (!found) return forbidden;
      return answer(request.mode, request.headers, found, await checkAccess(services, request.context, found.access));
    },
  };
}

/** The forward-auth endpoints as Fastify routes, on the portal and on app hosts. */
export async function forwardAuthRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const checker = forwardAuthCheck(services);
  const handler = (mode: ForwardAuthMode) =>
    async function forwardAuth(request: FastifyRequest, reply: FastifyReply) {
      const answer = await checker.check({ mode, remoteAddress: request.socket.remoteAddress, headers: request.headers, context: request });
      reply.header('cache-control', 'no-store').headers(answer.headers);
      switch (answer.kind) {
        case 'status':
          return reply.status(answer.status).send();
        case 'redirect':
          return reply.redirect(answer.location, 302);
        case 'denied-page':
          return sendDeniedPage(services, request, reply, answer);
      }
    };

  // Logged at warn only, and without the security headers meant for pages (the proxy never shows
  // this answer's headers to a browser as a page).
  const hot = { logLevel: 'warn', helmet: false } as const;
  app.get(paths.forwardAuth, hot, handler('auth_request'));
  app.get(paths.forwardAuthRedirect, hot, handler('redirect'));
}

export interface ForwardedRequest {
  origin: string;
  host: string;
  method: string;
  uri: string;
}

/**
 * Forwarded origins as proxies send them, parsed once: proto → host → the origin, or null when it is not
 * one ("https" + "App.Example.com:443" → https://app.example.com). A proxy sends the same few values on
 * every request, so the hot path does one lookup instead of lower-casing, matching and parsing. Bounded.
 */
const forwardedOrigins = new Map<string, Map<string, { origin: string; host: string } | null>>();
const MAX_FORWARDED_ORIGINS = 1_000;
let forwardedOriginCount = 0;

function forwardedOrigin(rawProto: string, rawHost: string): { origin: string; host: string } | null {
  let byHost = forwardedOrigins.get(rawProto);
  let parsed = byHost?.get(rawHost);
  if (parsed !== undefined) return parsed;
  parsed = parseForwardedOrigin(rawProto.toLowerCase(), rawHost.toLowerCase());
  if (forwardedOriginCount >= MAX_FORWARDED_ORIGINS) {
    forwardedOrigins.clear();
    forwardedOriginCount = 0;
    byHost = undefined;
  }
  if (!byHost) forwardedOrigins.set(rawProto, (byHost = new Map()));
  byHost.set(rawHost, parsed);
  forwardedOriginCount++;
  return parsed;
}

function parseForwardedOrigin(proto: string, host: string): { origin: string; host: string } | null {
  if ((proto !== 'http' && proto !== 'https') || !/^[a-z0-9.-]+(:\d{1,5})?$/.test(host)) return null;
  const key = `${proto}://${host}`;
  // URL drops a default port (":443" for https), as browsers do in Origin.
  if (!URL.canParse(key)) return null;
  const origin = new URL(key).origin;
  return { origin, host: new URL(origin).host };
}

/** The original request as a trusted proxy describes it in X-Forwarded-*, or undefined when it does not make one. */
export function forwardedRequest(headers: IncomingHttpHeaders): ForwardedRequest | undefined {
  const proto = single(headers['x-forwarded-proto']);
  const host = single(headers['x-forwarded-host']);
  const uri = single(headers['x-forwarded-uri']) ?? single(headers['x-original-uri']) ?? '/';
  const method = single(headers['x-forwarded-method']) ?? 'GET';
  if (!proto || !host || !uri.startsWith('/')) return undefined;
  const parsed = forwardedOrigin(proto, host);
  if (!parsed) return undefined;
  return { origin: parsed.origin, host: parsed.host, method: method === 'GET' ? method : method.toUpperCase(), uri };
}

/** The first value of a header a proxy may have sent as a list. */
function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  const comma = first.indexOf(',');
  const item = comma === -1 ? first : first.slice(0, comma);
  // Proxies send these without padding: trim only when an end is not a visible ASCII character.
  if (item.length > 0 && isVisibleAscii(item.charCodeAt(0)) && isVisibleAscii(item.charCodeAt(item.length - 1))) return item;
  return item.trim() || undefined;
}

function isVisibleAscii(code: number): boolean {
  return code > 0x20 && code < 0x7f;
}

export function isBrowserNavigation(method: string, accept: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && (accept ?? '').includes('text/html');
}
