import type { IncomingHttpHeaders } from 'node:http';
import { isIdentityHeader } from '../authorize/identityHeaders.js';
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

/** Request headers Gatehouse writes itself rather than passing on. */
const SET_BY_GATEHOUSE = new Set(['host', 'cookie', 'forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

/** Extra hop-by-hop names a Connection header lists ("close" and "keep-alive" name none). */
function namedByConnection(connection: string | string[] | undefined): Set<string> | undefined {
  const value = Array.isArray(connection) ? connection.join(',') : connection;
  if (!value || value === 'keep-alive' || value === 'close') return undefined;
  return new Set(value.split(',').map((name) => name.trim().toLowerCase()));
}

export interface UpstreamContext {
  /** The X-Forwarded-For to send (http/trustedProxies.ts, forwardedForOf). */
  forwardedFor: string;
  /** The public origin the request came in on, e.g. https://wiki.example.com */
  publicOrigin: string;
  /** Keep the public Host header (preserveHost) instead of the upstream's. */
  preserveHost: boolean;
  /** What Gatehouse asserts about the user (empty for public paths). */
  identity: Record<string, string> | undefined;
}

/** Scheme and host of each public origin, parsed once (they are needed on every proxied request). */
const originParts = new Map<string, { proto: string; host: string }>();
function partsOf(origin: string): { proto: string; host: string } {
  let parts = originParts.get(origin);
  if (!parts) {
    const url = new URL(origin);
    parts = { proto: url.protocol.slice(0, -1), host: url.host };
    if (originParts.size > 1_000) originParts.clear();
    originParts.set(origin, parts);
  }
  return parts;
}

/**
 * What an upstream receives: never a client's copy of the identity headers (in any spelling), never
 * Gatehouse's cookies, no hop-by-hop headers, always X-Forwarded-* describing the original request,
 * and Gatehouse's own identity headers when there is a user. The Host is the upstream's own unless
 * the app preserves the public one (`host` is left out here and set by the HTTP client otherwise).
 */
export function upstreamRequestHeaders(incoming: IncomingHttpHeaders, context: UpstreamContext): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const named = namedByConnection(incoming.connection);
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || SET_BY_GATEHOUSE.has(name) || named?.has(name) || isIdentityHeader(name)) continue;
    headers[name] = incoming[name];
  }
  const cookie = withoutOurCookies(incoming.cookie);
  if (cookie) headers.cookie = cookie;
  const { proto, host } = partsOf(context.publicOrigin);
  headers['x-forwarded-for'] = context.forwardedFor;
  headers['x-forwarded-proto'] = proto;
  headers['x-forwarded-host'] = host;
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
