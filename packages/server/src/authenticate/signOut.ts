import { pages } from '@gatehouse/contract';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { AuthenticateDeps } from './deps.js';
import { cookieOptions, type CookieNames } from '../sessions/cookies.js';
import { signedIn } from '../sessions/guard.js';
import { endSession } from '../sessions/endSession.js';

/** How long a browser may take at the IdP's logout page (a confirmation, a slow IdP) and still be recognised. */
const SIGN_OUT_STATE_SECONDS = 10 * 60;
/** openid-client's randomState: 32 random bytes, base64url. Anything much longer is not ours. */
const MAX_STATE_LENGTH = 128;

/**
 * Ends the Gatehouse session first (so it is dead whatever happens next), then sends the browser to the
 * IdP's end_session_endpoint (OpenID Connect RP-Initiated Logout 1.0) with id_token_hint,
 * post_logout_redirect_uri and a `state`, which brings the person back to /signed-out. The state is
 * also kept in a short-lived HttpOnly cookie, so the return can be recognised (see signedOutReturn).
 */
export function signOut(deps: Pick<AuthenticateDeps, 'cookies' | 'secureCookies' | 'sessions' | 'audit' | 'portalOrigin' | 'providers'>) {
  const { cookies, secureCookies, sessions, audit, portalOrigin } = deps;
  const ending = { sessions, audit, portalOrigin, logoutUrl: (providerId: string, idToken: string | undefined) => idpLogoutUrl(deps, providerId, idToken) };

  return async function handler(request: FastifyRequest<{ Body: { everywhere?: string } | undefined }>, reply: FastifyReply) {
    // Signed in, with the form's CSRF token, checked by the route's guard before anything changes: a
    // forged request must not even clear the cookie (authenticate/index.ts).
    const current = await signedIn(request);
    reply.header('cache-control', 'no-store');
    reply.clearCookie(cookies.session, cookieOptions(secureCookies));

    // "Sign out everywhere" ends every session of the person, then logs out at this session's IdP.
    const everywhere = request.body?.everywhere === 'true';
    const { location, logoutState } = await endSession(ending, request, current, { everywhere });
    if (logoutState) reply.setCookie(cookies.signOutState, logoutState, cookieOptions(secureCookies, SIGN_OUT_STATE_SECONDS));
    return reply.redirect(location, 303);
  };
}

/**
 * The IdP's end-session URL for a session (RP-Initiated Logout 1.0 §2), when the IdP has one, with a
 * fresh `state`: some IdPs only send the browser back to post_logout_redirect_uri when one is given.
 */
export async function idpLogoutUrl(
  deps: Pick<AuthenticateDeps, 'providers' | 'portalOrigin'>,
  providerId: string,
  idToken: string | undefined,
): Promise<{ url: string; state: string } | undefined> {
  if (!deps.providers.get(providerId)) return undefined;
  const connection = await deps.providers.connection(providerId);
  const state = client.randomState();
  const url = connection.logoutUrl?.({ postLogoutRedirectUri: `${deps.portalOrigin}${pages.signedOut.path}`, idToken, state });
  return url ? { url: url.href, state } : undefined;
}

/**
 * The way back to an app after its RP-initiated logout went through the IdP's logout: the OpenID
 * Provider's continuation (provide/logoutContinuation.ts), which the composition root passes in.
 */
export interface SignedOutContinuations {
  /** The app's post-logout URI with its state, or why not. */
  redeem(token: string, idpState: string): Promise<{ location: string } | { refused: string }>;
}

/**
 * Runs before the /signed-out page. The IdP sends the browser back with the logout `state` (RP-Initiated
 * Logout 1.0 §3); it is compared with the one this browser was given, and only logged: the session
 * ended before the browser left, so a missing or foreign state changes nothing for security — it is
 * never a reason to sign anyone in or out, nor shown. What a match tells is that this browser's round
 * trip through the IdP's logout completed, which the log records. A state that does not match (forged,
 * stale, or from a sign-out on an app host, whose cookie the portal cannot see) is dropped unread.
 * Either way the cookie goes, and an address with a query is answered with a redirect to the bare page,
 * so the state is never reflected into the page, its history entry or a Referer.
 *
 * When the sign-out was an app's RP-initiated logout, a matched state goes on to the app's post-logout
 * URI: only with the continuation cookie of this browser, bound to that state, signed, once, and to a
 * URI the app still has registered. Anything else shows the signed-out page (the person is signed out
 * either way; only the trip back to the app is lost).
 */
export function signedOutReturn(deps: {
  cookies: Pick<CookieNames, 'signOutState' | 'logoutContinuation'>;
  secureCookies: boolean;
  continuations?: SignedOutContinuations | undefined;
}) {
  return async function preHandler(request: FastifyRequest, reply: FastifyReply) {
    const expected = request.cookies[deps.cookies.signOutState];
    const continuation = request.cookies[deps.cookies.logoutContinuation];
    const hasQuery = request.url.includes('?');
    if (expected === undefined && continuation === undefined && !hasQuery) return;
    const state = (request.query as Record<string, unknown> | undefined)?.state;
    // One use whatever happens next.
    if (continuation !== undefined) reply.clearCookie(deps.cookies.logoutContinuation, cookieOptions(deps.secureCookies));
    let matched = false;
    if (expected !== undefined) {
      reply.clearCookie(deps.cookies.signOutState, cookieOptions(deps.secureCookies));
      matched = typeof state === 'string' && sameState(state, expected);
      request.log.info({ logoutState: matched ? 'matched' : state === undefined ? 'missing' : 'mismatched' }, 'back from the IdP logout');
    } else if (state !== undefined) {
      request.log.info({ logoutState: 'unexpected' }, 'a logout state this browser was not given: ignored');
    }
    if (matched && continuation !== undefined && deps.continuations) {
      const redeemed = await deps.continuations.redeem(continuation, state as string);
      if ('location' in redeemed) return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(redeemed.location, 303);
      request.log.warn({ continuation: redeemed.refused }, 'the way back to the app after its logout was refused; the signed-out page is shown');
    }
    if (!hasQuery) return;
    return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(pages.signedOut.path, 303);
  };
}

function sameState(given: string, expected: string): boolean {
  if (given.length === 0 || given.length > MAX_STATE_LENGTH) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
