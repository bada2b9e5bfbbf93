import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Session } from './sessionStore.js';

/**
 * CSRF defence for state-changing requests (PRODUCT.md "Cookies and trust"): the request must come from
 * the portal's own origin AND carry a token bound to the session. SameSite=Lax alone is not enough: the
 * IdPs and apps on other loopback ports are same-site with the portal.
 */
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = 'csrf_token';

/** HMAC of the session's secret hash: unforgeable without the key, useless in another session. */
export function csrfToken(cookieKey: Buffer, session: Pick<Session, 'secret_hash'>): string {
  return createHmac('sha256', cookieKey).update(`csrf\0${session.secret_hash}`).digest('base64url');
}

/**
 * The exact Origin, or, where a browser sent none — or "null", as it must for a POST from a page whose
 * referrer policy is no-referrer (Fetch §3.1) — Fetch Metadata saying same-origin.
 */
export function isSameOrigin(request: FastifyRequest, expectedOrigin: string): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== 'null') return origin === expectedOrigin;
  return request.headers['sec-fetch-site'] === 'same-origin';
}

export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers[CSRF_HEADER];
  if (typeof header === 'string') return header;
  const body = request.body as Record<string, unknown> | undefined;
  const field = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
  return typeof field === 'string' ? field : undefined;
}

export function isValidCsrf(request: FastifyRequest, portalOrigin: string, cookieKey: Buffer, session: Session): boolean {
  if (!isSameOrigin(request, portalOrigin)) return false;
  return tokensMatch(presentedToken(request), csrfToken(cookieKey, session));
}

/** Constant-time comparison of a presented token with the expected one. */
export function tokensMatch(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const actual = Buffer.from(presented);
  const wanted = Buffer.from(expected);
  return actual.length === wanted.length && timingSafeEqual(actual, wanted);
}
