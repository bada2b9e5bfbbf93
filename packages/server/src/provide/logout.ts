import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { AuditLog, RequestContext } from '../audit/auditLog.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { SessionStore } from '../sessions/sessionStore.js';

export interface LogoutDeps {
  sessions: Pick<SessionStore, 'revoke'>;
  audit: Pick<AuditLog, 'record'>;
  /** The browser's Gatehouse session and what the audit log keeps of the request. */
  request(): (RequestContext & { currentSession(): Promise<CurrentSession | undefined> }) | undefined;
  /** The app of a client id, for the audit log. */
  appIdOf(clientId: string | undefined): string | undefined;
}

/**
 * RP-Initiated Logout ends the Gatehouse session, not only the OP's: once the person confirmed
 * ("Sign out", `logout=yes`), before the answer that sends them back to the app's registered
 * post-logout URI (with its state) is written. The session's end is what tells the other apps (their
 * grants end with it, back-channel logout) as any sign-out does. "Stay signed in" ends only the asking
 * app's grant, which oidc-provider does itself.
 */
export function endGatehouseSessionOnLogout(provider: Provider, deps: LogoutDeps): void {
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as KoaContextWithOIDC).oidc;
    if (oidc?.route !== 'end_session_confirm' || ctx.status !== 303 || !oidc.params?.logout) return;
    const request = deps.request();
    const current = await request?.currentSession();
    if (!request || !current) return;
    if (!(await deps.sessions.revoke(current.session.id, 'sign-out'))) return;
    const appId = deps.appIdOf(oidc.client?.clientId);
    await deps.audit.record({
      type: 'sign_out',
      actorUserId: current.user.id,
      targetUserId: current.user.id,
      sessionId: current.session.id,
      providerId: current.session.provider_id,
      request,
      details: { everywhere: false, sessions: 1, ...(appId ? { app: appId } : {}), oidc: 'rp-initiated-logout' },
    });
  });
}
