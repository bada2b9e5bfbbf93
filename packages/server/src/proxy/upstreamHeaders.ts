import type { IncomingHttpHeaders } from 'node:http';
import { canonicalHeaderName, IDENTITY_HEADER_PREFIX } from '../authorize/identityHeaders.js';
import { ALL_COOKIE_NAMES } from '../sessions/cookies.js';

/** Removes Gatehouse's own cookies from a Cookie header; undefined when nothing is left. */
export function withoutOurCookies(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const kept = cookieHeader
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '' && !ALL_COOKIE_NAMES.has(pair.slice(0, pair.indexOf('=') === -1 ? pair.length : pair.indexOf('=')).trim()));
  return kept.length > 0 ? kept.join('; ') : undefined;
}

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection and are never forwarded, in either
 * direction; neither are the headers a Connection header names. `expect` is answered by Gatehouse
 * itself (Node sends the 100 Continue), and `upgrade` only means something on the WebSocket path.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);

/**
 * Request headers an upstream never receives from the client, because Gatehouse writes them itself
 * (`host`, `cookie`, the X-Forwarded-* it sets below), or because an app reading them would believe a
 * claim Gatehouse never checked. Not even from a trusted proxy (PRODUCT.md: forwarded headers are
 * believed only from trusted proxies — and believing is Gatehouse's job, done once, here): Gatehouse
 * judged the request line, so the path, method, host and scheme the app acts on must be the ones in it.
 *
 * - where the request came from: Gatehouse sends X-Forwarded-For (a trusted proxy's list plus the peer)
 *   and X-Real-IP (the client address it derived from that list); every other client-address header is
 *   the client's word (or a CDN's, which an app must not read past Gatehouse);
 * - which host, scheme and port it came in on: the app's public origin, sent as X-Forwarded-Host/-Proto/
 *   -Port; the variants some frameworks read instead are removed;
 * - what was "really" asked (IIS, Symfony, Laravel, Spring, Zend read X-Original-URL / X-Rewrite-URL;
 *   Traefik and nginx idioms send X-Forwarded-Uri / X-Original-URI; X-Forwarded-Prefix and
 *   X-Script-Name re-root an app): a public path could otherwise be turned into a private one after the
 *   check. A reverse proxy sends the path in the request line and nowhere else;
 * - which method (X-HTTP-Method-Override and friends): a GET judged as public would act as a DELETE.
 *
 * Names are compared in their canonical spelling (lower case, `_` read as `-`), as some servers and
 * frameworks (CGI, WSGI, PHP, older Gunicorn) read `X_Original_URL` as `X-Original-URL`.
 */
const NOT_FROM_THE_CLIENT = new Set([
  'host',
  'cookie',
  // Describing the client and the hops (set below: x-forwarded-for, x-real-ip).
  'forwarded',
  'x-forwarded',
  'forwarded-for',
  'x-forwarded-for',
  'x-original-forwarded-for',
  'x-real-ip',
  'x-client-ip',
  'client-ip',
  'true-client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'cf-connecting-ipv6',
  'cf-pseudo-ipv4',
  'fastly-client-ip',
  'x-proxyuser-ip',
  'x-originating-ip',
  'x-remote-ip',
  'x-remote-addr',
  'x-envoy-external-address',
  'x-azure-clientip',
  'x-azure-socketip',
  'x-appengine-user-ip',
  // Host, scheme and port (set below: x-forwarded-host, -proto, -port).
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-forwarded-scheme',
  'x-forwarded-protocol',
  'x-forwarded-ssl',
  'front-end-https',
  'x-url-scheme',
  'x-scheme',
  'x-original-host',
  'x-host',
  'x-http-host-override',
  // The path: never a header.
  'x-original-url',
  'x-rewrite-url',
  'x-original-uri',
  'x-forwarded-uri',
  'x-forwarded-path',
  'x-forwarded-prefix',
  'x-envoy-original-path',
  'x-script-name',
  // The method: only the request line's.
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  'x-original-method',
  'x-forwarded-method',
  // Only the underscore spelling is dropped (the real one is framed by Node and passed on as it is).
  'content-length',
]);

/**
 * Whether a request header never goes upstream as the client sent it: hop-by-hop, or ours, or named
 * above, in any spelling. The usual spelling (Node's: lower case, hyphens) costs a Set lookup or two.
 */
function dropped(name: string, named: Set<string> | undefined): boolean {
  if (HOP_BY_HOP.has(name) || named?.has(name)) return true;
  // The framed Content-Length passes on as Node read it; only another spelling of it is dropped.
  if (name === 'content-length') return false;
  const canonical = canonicalHeaderName(name);
  return NOT_FROM_THE_CLIENT.has(canonical) || canonical.startsWith(IDENTITY_HEADER_PREFIX) || (canonical !== name && (HOP_BY_HOP.has(canonical) || named?.has(canonical) === true));
}

/** Extra hop-by-hop names a Connection header lists ("close" and "keep-alive" name none). */
function namedByConnection(connection: string | string[] | undefined): Set<string> | undefined {
  const value = Array.isArray(connection) ? connection.join(',') : connection;
  if (!value || value === 'keep-alive' || value === 'close') return undefined;
  return new Set(value.split(',').map((name) => name.trim().toLowerCase()));
}

export interface UpstreamContext {
  /** The X-Forwarded-For to send (http/trustedProxies.ts, forwardedForOf). */
  forwardedFor: string;
  /** The client's address as Gatehouse derived it (http/trustedProxies.ts, clientAddressOf): X-Real-IP. */
  clientAddress: string;
  /** The public origin the request came in on, e.g. https://wiki.example.com */
  publicOrigin: string;
  /** Keep the public Host header (preserveHost) instead of the upstream's. */
  preserveHost: boolean;
  /** What Gatehouse asserts about the user (empty for public paths). */
  identity: Record<string, string> | undefined;
}

/** Scheme, host and port of each public origin, parsed once (they are needed on every proxied request). */
const originParts = new Map<string, { proto: string; host: string; port: string }>();
function partsOf(origin: string): { proto: string; host: string; port: string } {
  let parts = originParts.get(origin);
  if (!parts) {
    const url = new URL(origin);
    parts = { proto: url.protocol.slice(0, -1), host: url.host, port: url.port || (url.protocol === 'https:' ? '443' : '80') };
    if (originParts.size > 1_000) originParts.clear();
    originParts.set(origin, parts);
  }
  return parts;
}

/**
 * What an upstream receives: never a client's copy of the identity headers, nor of the forwarding,
 * rewrite and method-override headers (NOT_FROM_THE_CLIENT), in any spelling; never Gatehouse's
 * cookies; no hop-by-hop headers; always X-Forwarded-For/-Proto/-Host/-Port and X-Real-IP describing the
 * original request as Gatehouse judged it, and Gatehouse's own identity headers when there is a user. The Host is the upstream's own unless
 * the app preserves the public one (`host` is left out here and set by the HTTP client otherwise).
 */
export function upstreamRequestHeaders(incoming: IncomingHttpHeaders, context: UpstreamContext): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const named = namedByConnection(incoming.connection);
  for (const name in incoming) {
    if (dropped(name, named)) continue;
    headers[name] = incoming[name];
  }
  const cookie = withoutOurCookies(incoming.cookie);
  if (cookie) headers.cookie = cookie;
  const { proto, host, port } = partsOf(context.publicOrigin);
  headers['x-forwarded-for'] = context.forwardedFor;
  headers['x-forwarded-proto'] = proto;
  headers['x-forwarded-host'] = host;
  headers['x-forwarded-port'] = port;
  headers['x-real-ip'] = context.clientAddress;
  if (context.preserveHost) headers.host = host;
  if (context.identity) Object.assign(headers, context.identity);
  return headers;
}

/**
 * What the client receives of an upstream's answer: no hop-by-hop headers, and no Set-Cookie for
 * Gatehouse's own cookie names (an upstream may not set or clear them on the app host).
 */
export function downstreamResponseHeaders(incoming: IncomingHttpHeaders): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const named = namedByConnection(incoming.connection);
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || named?.has(name)) continue;
    headers[name] = incoming[name];
  }
  const setCookie = incoming['set-cookie'];
  if (setCookie) {
    const kept = setCookie.filter((line) => !ALL_COOKIE_NAMES.has(line.slice(0, line.indexOf('=')).trim()));
    if (kept.length > 0) headers['set-cookie'] = kept;
    else delete headers['set-cookie'];
  }
  return headers;
}
