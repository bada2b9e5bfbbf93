import type { IncomingHttpHeaders } from 'node:http';
import { stripIdentityHeaders } from '../authorize/identityHeaders.js';
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

export interface UpstreamContext {
  clientIp: string | undefined;
  /** The public origin the request came in on, e.g. https://wiki.example.com */
  publicOrigin: string;
  /** Keep the public Host header (preserveHost) instead of the upstream's. */
  preserveHost: boolean;
  /** What Gatehouse asserts about the user (empty for public paths). */
  identity: Record<string, string> | undefined;
}

/**
 * What an upstream receives: never a client's copy of the identity headers (in any spelling), never
 * Gatehouse's cookies, always X-Forwarded-* describing the original request, and Gatehouse's own
 * identity headers when there is a user.
 */
export function upstreamRequestHeaders(incoming: IncomingHttpHeaders, context: UpstreamContext): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = { ...incoming };
  stripIdentityHeaders(headers as Record<string, unknown>);
  const cookie = withoutOurCookies(incoming.cookie);
  if (cookie) headers.cookie = cookie;
  else delete headers.cookie;
  const publicUrl = new URL(context.publicOrigin);
  const forwardedFor = incoming['x-forwarded-for'];
  headers['x-forwarded-for'] = [forwardedFor, context.clientIp].filter(Boolean).join(', ');
  headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
  headers['x-forwarded-host'] = publicUrl.host;
  delete headers.forwarded;
  if (context.preserveHost) headers.host = publicUrl.host;
  if (context.identity) Object.assign(headers, context.identity);
  return headers;
}

/** An upstream may not set (or clear) Gatehouse's cookies on the app host. */
export function withoutOurSetCookies(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const setCookie = headers['set-cookie'];
  if (!setCookie) return headers;
  const kept = setCookie.filter((line) => !ALL_COOKIE_NAMES.has(line.slice(0, line.indexOf('=')).trim()));
  const next = { ...headers };
  if (kept.length > 0) next['set-cookie'] = kept;
  else delete next['set-cookie'];
  return next;
}
