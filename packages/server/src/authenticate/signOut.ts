import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { paths } from '../paths.js';
import type { AuthenticateDeps } from './index.js';
import { cookieOptions } from '../sessions/cookies.js';
import { signedIn } from '../sessions/guard.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';

/**
 * Ends the Gatehouse session first (so it is dead whatever happens next), then sends the browser to the
 * IdP's end_session_endpoint (OpenID Connect RP-Initiated Logout 1.0) with id_token_hint and
 * post_logout_redirect_uri, which brings the person back to /signed-out.
 */
export function signOut(deps: AuthenticateDeps) {
  const { cookies, secureCookies } = deps;

  return async function handler(request: FastifyRequest, reply: FastifyReply) {
    // Signed in, with the form's CSRF token, checked by the route's guard before anything changes: a
    // forged request must not even clear the cookie (authenticate/index.ts).
    const current = await signedIn(request);
    reply.header('cache-control', 'no-store');
    reply.clearCookie(cookies.session, cookieOptions(secureCookies));

    // "Sign out everywhere" ends every session of the person, then logs out at this session's IdP.
    const everywhere = (request.body as Record<string, unknown> | undefined)?.everywhere === 'true';
    return reply.redirect(await endSession(deps, request, current, { everywhere }), 303);
  };
}

/**
 * Ends a session (or all of the person's) and records it, then answers where the browser goes next:
 * the IdP's end-session URL when it has one, else /signed-out. Used on the portal and on app hosts.
 */
export async function endSession(
  deps: Pick<AuthenticateDeps, 'sessions' | 'audit' | 'providers' | 'portalOrigin'>,
  request: FastifyRequest,
  current: CurrentSession,
  { everywhere, appId }: { everywhere: boolean; appId?: string },
): Promise<string> {
  const { sessions, audit } = deps;
  // Read before revoking: revocation erases the stored tokens.
  const idToken = sessions.idToken(current.session);
  const ended = everywhere
    ? (await sessions.revokeAllForUser(current.user.id, 'sign-out-everywhere')).length
    : Number(await sessions.revoke(current.session.id, 'sign-out'));
  await audit.record({
    type: 'sign_out',
    actorUserId: current.user.id,
    targetUserId: current.user.id,
    sessionId: current.session.id,
    providerId: current.session.provider_id,
    request,
    details: { everywhere, sessions: ended, ...(appId ? { app: appId } : {}) },
  });
  request.log.info({ sessionId: current.session.id, userId: current.user.id, everywhere, ended }, 'signed out');
  const endSessionUrl = await idpLogoutUrl(deps, current.session.provider_id, idToken).catch((error: unknown) => {
    // The local session is already over; an unreachable IdP only means its own session stays.
    request.log.warn({ err: error, provider: current.session.provider_id }, 'RP-initiated logout skipped');
    return undefined;
  });
  return endSessionUrl ?? `${deps.portalOrigin}${paths.pages.signedOut}`;
}

/** The IdP's end-session URL for a session (RP-Initiated Logout), when the IdP has one. */
export async function idpLogoutUrl(deps: Pick<AuthenticateDeps, 'providers' | 'portalOrigin'>, providerId: string, idToken: string | undefined): Promise<string | undefined> {
  if (!deps.providers.get(providerId)) return undefined;
  const configuration = await deps.providers.configuration(providerId);
  if (!configuration.serverMetadata().end_session_endpoint) return undefined;
  const parameters: Record<string, string> = { post_logout_redirect_uri: `${deps.portalOrigin}${paths.pages.signedOut}` };
  if (idToken) parameters.id_token_hint = idToken;
  return client.buildEndSessionUrl(configuration, parameters).href;
}
