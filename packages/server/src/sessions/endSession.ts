import { pages } from '@gatehouse/contract';
import type { AuditLog } from '../audit/auditLog.js';
import type { ResolveContext, CurrentSession } from './sessionResolver.js';
import type { SessionStore } from './sessionStore.js';

/**
 * The IdP's end-session URL for a session (OpenID Connect RP-Initiated Logout 1.0), when it has one,
 * and the `state` it carries. Talking to IdPs is authenticate/'s: the composition root passes its
 * implementation in.
 */
export type IdpLogoutUrl = (providerId: string, idToken: string | undefined) => Promise<{ url: string; state: string } | undefined>;

/** Where the browser goes once the session has ended, and the logout `state` when that is the IdP. */
export interface SessionEnded {
  location: string;
  /** Set when `location` is the IdP's end-session endpoint: the state it will send back to /signed-out. */
  logoutState?: string | undefined;
}

export interface EndSessionDeps {
  sessions: Pick<SessionStore, 'idToken' | 'revoke' | 'revokeAllForUser'>;
  audit: Pick<AuditLog, 'record'>;
  portalOrigin: string;
  logoutUrl: IdpLogoutUrl;
}

/**
 * Ends a session (or all of the person's) and records it, then answers where the browser goes next:
 * the IdP's end-session URL when it has one, else /signed-out. Used on the portal and on app hosts.
 * `switchAccount`: the person signs in again at once, as someone else; the IdP's session is left to
 * the IdP, which the next sign-in asks to let them choose (its logout page would only stand between).
 */
export async function endSession(
  { sessions, audit, portalOrigin, logoutUrl }: EndSessionDeps,
  request: ResolveContext,
  current: CurrentSession,
  {
    everywhere,
    appId,
    switchAccount = false,
    rpInitiated = false,
  }: { everywhere: boolean; appId?: string | undefined; switchAccount?: boolean; /** An app's RP-initiated logout at the OpenID Provider. */ rpInitiated?: boolean },
): Promise<SessionEnded> {
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
    details: { everywhere, sessions: ended, ...(appId ? { app: appId } : {}), ...(switchAccount ? { switchAccount } : {}), ...(rpInitiated ? { oidc: 'rp-initiated-logout' } : {}) },
  });
  request.log.info({ sessionId: current.session.id, userId: current.user.id, everywhere, ended, ...(switchAccount ? { switchAccount } : {}) }, 'signed out');
  if (switchAccount) return { location: `${portalOrigin}${pages.signIn.path}` };
  const idpLogout = await logoutUrl(current.session.provider_id, idToken).catch((error: unknown) => {
    // The local session is already over; an unreachable IdP only means its own session stays.
    request.log.warn({ err: error, provider: current.session.provider_id }, 'RP-initiated logout skipped');
    return undefined;
  });
  return idpLogout ? { location: idpLogout.url, logoutState: idpLogout.state } : { location: `${portalOrigin}${pages.signedOut.path}` };
}
