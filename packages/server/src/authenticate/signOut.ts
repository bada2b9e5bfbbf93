import { pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticateDeps } from './deps.js';
import { cookieOptions } from '../sessions/cookies.js';
import { signedIn } from '../sessions/guard.js';
import { endSession } from '../sessions/endSession.js';

/**
 * Ends the Gatehouse session first (so it is dead whatever happens next), then sends the browser to the
 * IdP's end_session_endpoint (OpenID Connect RP-Initiated Logout 1.0) with id_token_hint and
 * post_logout_redirect_uri, which brings the person back to /signed-out.
 */
export function signOut(deps: AuthenticateDeps) {
  const { cookies, secureCookies } = deps;
  const ending = { ...deps, logoutUrl: (providerId: string, idToken: string | undefined) => idpLogoutUrl(deps, providerId, idToken) };

  return async function handler(request: FastifyRequest<{ Body: { everywhere?: string } | undefined }>, reply: FastifyReply) {
    // Signed in, with the form's CSRF token, checked by the route's guard before anything changes: a
    // forged request must not even clear the cookie (authenticate/index.ts).
    const current = await signedIn(request);
    reply.header('cache-control', 'no-store');
    reply.clearCookie(cookies.session, cookieOptions(secureCookies));

    // "Sign out everywhere" ends every session of the person, then logs out at this session's IdP.
    const everywhere = request.body?.everywhere === 'true';
    return reply.redirect(await endSession(ending, request, current, { everywhere }), 303);
  };
}

/** The IdP's end-session URL for a session (RP-Initiated Logout), when the IdP has one. */
export async function idpLogoutUrl(deps: Pick<AuthenticateDeps, 'providers' | 'portalOrigin'>, providerId: string, idToken: string | undefined): Promise<string | undefined> {
  if (!deps.providers.get(providerId)) return undefined;
  const connection = await deps.providers.connection(providerId);
  return connection.logoutUrl?.({ postLogoutRedirectUri: `${deps.portalOrigin}${pages.signedOut.path}`, idToken })?.href;
}
