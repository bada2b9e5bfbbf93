import { endpoints, ID_PATTERN } from '@gatehouse/contract';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import { cookieValue } from '../sessions/cookies.js';
import type { ResolveContext } from '../sessions/sessionResolver.js';
import { originOf, type AppRegistry } from '../apps/appRegistry.js';
import { trustedProxyCheck } from '../http/trustedProxies.js';
import { requestLogsAtLeast } from '../operations/requestLogging.js';
import { checkAccess, checkAccessNow, type AccessDeps, type AccessRequest, type AccessResult } from '../authorize/checkAccess.js';
import { sendDeniedPage, type DeniedPageDeps } from './deniedResponse.js';
import { canonicalHeaderName, identityHeaders } from '../authorize/identityHeaders.js';

export type ForwardAuthMode = 'auth_request' | 'redirect';

/**
 * What a forward-auth check answers: a status with the identity headers, a redirect, or the 403 page;
 * `judged`, when the request could be judged at all, is what was decided about which original request
 * (for metrics and the access log).
 */
export type ForwardAuthAnswer = (
  | { kind: 'status'; status: 200 | 401 | 403; headers: Record<string, string> }
  | { kind: 'redirect'; location: string; headers: Record<string, string> }
  | { kind: 'denied-page'; app: AppConfig; email: string; url: string; headers: Record<string, string> }
) & { judged?: { result: AccessResult; original: ForwardedRequest } };

export interface ForwardAuthRequest {
  mode: ForwardAuthMode;
  /** The app the proxy block serves, as named in the auth URL (`/.gatehouse/auth/<app id>`). */
  appId: string | undefined;
  /** The address of the peer that connected (the proxy, when there is one). */
  remoteAddress: string | undefined;
  headers: IncomingHttpHeaders;
  context: ResolveContext;
}

/** The headers a forward-auth request may name the original URI in; exactly one is read (config). */
export type ForwardedUriHeader = Config['forwardAuth']['uriHeader'];

/**
 * Forward-auth for proxies people already run. `/.gatehouse/auth/<app id>` follows nginx `auth_request`:
 * 2xx with identity headers, 401 or 403, never a redirect. `/.gatehouse/forward-auth/<app id>` follows
 * Traefik `forwardAuth` and Caddy `forward_auth`: the same, except a signed-out browser is redirected to
 * sign in. Every identity header is always in the answer (empty when not applicable) so the proxy
 * overwrites whatever the client sent.
 *
 * What is judged is tied to what the proxy will do, never to what the client says:
 * - the app is the one the proxy block names in the auth URL, not the one the client's Host picks: a
 *   proxy block that also answers other Host values (nginx's default server, Caddy's site matcher,
 *   which ignores the port) would otherwise apply another app's policy to this app's upstream. The
 *   forwarded origin must be that app's origin, or the answer is 403;
 * - the original request is read from X-Forwarded-* only when the peer is a trusted proxy, each header
 *   as one exact value (a list, a second header or padding is refused, never split or trimmed), and the
 *   URI from the one header the deployment names (`forwardAuth.uriHeader`), with no fallback: a request
 *   that also carries another URI or URL-rewrite header (X-Original-URL, X-Rewrite-URL, …), in any
 *   spelling, is refused, since the proxy passes the client's copy on to the app, which may route by it;
 * - the URI is judged as the app will resolve it (authorize/publicPaths.ts).
 *
 * The decision is made here once; the hot path (proxy/hotPath.ts) answers it on node:http, and the
 * Fastify routes below answer it too (requests the hot path leaves to them, and the 403 page).
 */
export interface ForwardAuthCheck {
  /** The answer when it needs no waiting (see checkAccessNow), else undefined: then ask `check`. */
  now(request: Omit<ForwardAuthRequest, 'context'>): ForwardAuthAnswer | undefined;
  check(request: ForwardAuthRequest): Promise<ForwardAuthAnswer>;
}

/** What forward-auth takes beyond deciding access and the 403 page: the apps by id, which proxies to believe, the URI header. */
export interface ForwardAuthDeps extends AccessDeps, DeniedPageDeps {
  running: InForce<Pick<Config, 'admins' | 'trustedProxies' | 'forwardAuth' | 'organization'>>;
  apps: Pick<AppRegistry, 'guarded'>;
}

export function forwardAuthCheck(deps: ForwardAuthDeps, log: FastifyBaseLogger): ForwardAuthCheck {
  const isTrusted = trustedProxyCheck(deps.running.current.trustedProxies);
  const { apps, cookies } = deps;
  const forbidden: ForwardAuthAnswer = { kind: 'status', status: 403, headers: identityHeaders(undefined) };
  const warn = rateLimitedWarning(log);

  type Target = { original: ForwardedRequest; app: AppConfig; access: AccessRequest };
  /** The request the proxy asks about, or why it is refused (a misconfigured proxy or a forged request). */
  const target = ({ appId, remoteAddress, headers }: Omit<ForwardAuthRequest, 'context' | 'mode'>): Target | string => {
    if (!isTrusted(remoteAddress)) return 'the peer is not a trusted proxy (trustedProxies)';
    if (appId === undefined) return 'the auth URL names no app: the proxy must ask /.gatehouse/auth/<app id> (see docs/deploy)';
    const app = apps.guarded(appId);
    if (!app) return 'the auth URL names no known app';
    // Read per request: a config reload may name another header.
    const { uriHeader } = deps.running.current.forwardAuth;
    if (rewriteHeaderOf(headers, uriHeader)) return `the request carries a URI or URL-rewrite header other than ${uriHeader}`;
    const original = forwardedRequest(headers, uriHeader);
    if (!original) return uriHeader === 'x-original-url' ? 'X-Original-URL and X-Original-Method must each be one well-formed value' : `X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Method and ${uriHeader} must each be one well-formed value`;
    if (original.origin !== originOf(app)) return "the forwarded host is not the named app's host";
    const access: AccessRequest = {
      app,
      appOrigin: original.origin,
      method: original.method,
      path: original.uri,
      token: cookieValue(headers.cookie, cookies.appSession),
      // Only a real CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
      preflight: original.method === 'OPTIONS' && Boolean(headers.origin && headers['access-control-request-method']),
    };
    return { original, app, access };
  };

  const answer = (mode: ForwardAuthMode, headers: IncomingHttpHeaders, target: Target, result: AccessResult): ForwardAuthAnswer => {
    const decided = decide(mode, headers, target, result);
    decided.judged = { result, original: target.original };
    return decided;
  };

  const decide = (mode: ForwardAuthMode, headers: IncomingHttpHeaders, { original, app }: Target, result: AccessResult): ForwardAuthAnswer => {
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
          const location = `${original.origin}${endpoints.appStart}?rd=${encodeURIComponent(`${original.origin}${original.uri}`)}`;
          return { kind: 'redirect', location, headers: result.headers };
        }
        return { kind: 'status', status: 401, headers: result.headers };
    }
  };

  const refused = (appId: string | undefined, why: string): ForwardAuthAnswer => {
    warn(why, { app: appId, reason: why }, 'forward-auth request refused');
    return forbidden;
  };

  return {
    now(request) {
      const found = target(request);
      if (typeof found === 'string') return refused(request.appId, found);
      const result = checkAccessNow(deps, found.access);
      return result ? answer(request.mode, request.headers, found, result) : undefined;
    },
    async check(request) {
      const found = target(request);
      if (typeof found === 'string') return refused(request.appId, found);
      return answer(request.mode, request.headers, found, await checkAccess(deps, request.context, found.access));
    },
  };
}

/**
 * A warning logged at most once a minute per reason: a misconfigured proxy asks on every request, and
 * the operator needs one line saying why, not a flood.
 */
function rateLimitedWarning(log: FastifyBaseLogger): (key: string, fields: object, message: string) => void {
  const last = new Map<string, number>();
  return (key, fields, message) => {
    const now = Date.now();
    if (now - (last.get(key) ?? 0) < 60_000) return;
    if (last.size > 100) last.clear();
    last.set(key, now);
    log.warn(fields, message);
  };
}

/**
 * The forward-auth endpoint a request target asks for: its mode and the app it names, or undefined
 * when the target is not one. Read from the literal target, by the hot path and the routes alike:
 * proxies ask the literal path, and an encoded spelling ("/.gatehouse/%61uth", which the router
 * would match once decoded) is no forward-auth check. The bare endpoint (no app) is recognised so that
 * it is refused with a reason rather than answered as the portal's 404.
 */
export function forwardAuthEndpoint(url: string): { mode: ForwardAuthMode; appId: string | undefined } | undefined {
  for (const [base, mode] of ENDPOINTS) {
    if (!url.startsWith(base)) continue;
    if (url.length === base.length || url.charCodeAt(base.length) === QUESTION_MARK) return { mode, appId: undefined };
    if (url.charCodeAt(base.length) !== SLASH) continue;
    const appId = url.slice(base.length + 1);
    // Anything but a bare app id (a query, a further segment, an escape) names no app.
    return { mode, appId: ID_PATTERN.test(appId) ? appId : undefined };
  }
  return undefined;
}

const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;
const ENDPOINTS: ReadonlyArray<[string, ForwardAuthMode]> = [
  [endpoints.forwardAuth, 'auth_request'],
  [endpoints.forwardAuthRedirect, 'redirect'],
];

/** The forward-auth endpoints as Fastify routes, on the portal and on app hosts. */
export async function forwardAuthRoutes(app: FastifyInstance, { deps }: { deps: ForwardAuthDeps }) {
  const checker = forwardAuthCheck(deps, app.log);
  async function forwardAuth(request: FastifyRequest, reply: FastifyReply) {
    const endpoint = forwardAuthEndpoint(request.url);
    if (!endpoint) throw new AppError('not_found');
    const answer = await checker.check({
      ...endpoint,
      remoteAddress: request.socket.remoteAddress,
      headers: request.headers,
      context: request,
    });
    reply.header('cache-control', 'no-store').headers(answer.headers);
    switch (answer.kind) {
      case 'status':
        return reply.status(answer.status).send();
      case 'redirect':
        return reply.redirect(answer.location, 302);
      case 'denied-page':
        return sendDeniedPage(deps, request, reply, answer);
    }
  }

  // Logged at warn and above only (never below log.level, which a reload may change), and without the
  // security headers meant for pages (the proxy never shows this answer's headers to a browser as a page).
  requestLogsAtLeast(app, 'warn');
  const hot = { helmet: false } as const;
  for (const [base] of ENDPOINTS) {
    // The bare endpoint names no app: refused (403) with the reason in the log.
    app.get(base, hot, forwardAuth);
    app.get(`${base}/:appId`, hot, forwardAuth);
  }
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

/**
 * A request target as a proxy forwards it: origin-form (a path, then an optional query), visible ASCII
 * only. No whitespace, so two headers that Node joined into one ("a, b") never pass; no "#", which
 * RFC 9112 §3.2 does not allow in a request target.
 */
const REQUEST_TARGET = /^\/[\x21\x22\x24-\x7e]*$/;
/** RFC 9110 §9.1: a method is a token; it is case-sensitive, so it is judged exactly as the app gets it. */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

/**
 * The original request as a trusted proxy describes it in X-Forwarded-* and the configured URI header,
 * or undefined when it does not describe exactly one: each header must be one exact value. A comma is
 * never a separator here (a URI such as "/static,/../secret" is one path, which the app resolves to
 * "/secret"), and nothing is trimmed: a value is judged as the proxy will act on it.
 */
export function forwardedRequest(headers: IncomingHttpHeaders, uriHeader: ForwardedUriHeader): ForwardedRequest | undefined {
  if (uriHeader === 'x-original-url') return originalUrlRequest(headers);
  const proto = headers['x-forwarded-proto'];
  const host = headers['x-forwarded-host'];
  const uri = headers[uriHeader];
  const method = headers['x-forwarded-method'];
  if (typeof proto !== 'string' || typeof host !== 'string' || typeof uri !== 'string' || typeof method !== 'string') return undefined;
  if (!REQUEST_TARGET.test(uri) || !METHOD.test(method)) return undefined;
  const parsed = forwardedOrigin(proto, host);
  if (!parsed) return undefined;
  return { origin: parsed.origin, host: parsed.host, method, uri };
}

/** `<scheme>://<host>` and the request target, as ingress-nginx writes `$scheme://$http_host$request_uri`. */
const ORIGINAL_URL = /^(https?):\/\/([^/]*)(\/.*)$/s;

/**
 * The original request as ingress-nginx's external auth describes it: X-Original-URL, the scheme, the
 * client's Host and the request target in one value, and X-Original-Method. The same rules as for
 * X-Forwarded-*: each one exact value, the host judged as forwardedOrigin judges X-Forwarded-Host, the
 * target as a request target, nothing split, trimmed or decoded.
 */
function originalUrlRequest(headers: IncomingHttpHeaders): ForwardedRequest | undefined {
  const url = headers['x-original-url'];
  const method = headers['x-original-method'];
  if (typeof url !== 'string' || typeof method !== 'string' || !METHOD.test(method)) return undefined;
  const [, proto, host, uri] = ORIGINAL_URL.exec(url) ?? [];
  if (proto === undefined || host === undefined || uri === undefined || !REQUEST_TARGET.test(uri)) return undefined;
  const parsed = forwardedOrigin(proto, host);
  if (!parsed) return undefined;
  return { origin: parsed.origin, host: parsed.host, method, uri };
}

/**
 * Request headers an app may take the request's URI from instead of the request line, in their canonical
 * spelling (canonicalHeaderName: PHP, CGI and WSGI read X_Original_URL as X-Original-URL).
 */
const REWRITE_HEADERS = new Set(['x-forwarded-uri', 'x-original-uri', 'x-original-url', 'x-rewrite-url']);

/**
 * The name of a URI or URL-rewrite header in a forward-auth request other than the one configured, if
 * any. The proxy passes the client's headers on to the app; an app that routes by X-Original-URL (IIS,
 * Symfony, Laravel) would serve that URL while the check judged the request line. Names are looked at
 * only when they start with "x" (Node lower-cases them), so the usual request pays a character test
 * per header.
 */
export function rewriteHeaderOf(headers: IncomingHttpHeaders, uriHeader: ForwardedUriHeader): string | undefined {
  for (const name in headers) {
    if (name.charCodeAt(0) !== 0x78 || name === uriHeader) continue;
    if (REWRITE_HEADERS.has(canonicalHeaderName(name))) return name;
  }
  return undefined;
}

export function isBrowserNavigation(method: string, accept: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && (accept ?? '').includes('text/html');
}
