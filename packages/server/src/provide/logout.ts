import type { FastifyRequest } from 'fastify';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import { stringifySetCookie } from 'cookie';
import { cookieOptions, type CookieNames } from '../sessions/cookies.js';
import type { SessionEnded } from '../sessions/endSession.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { CONTINUATION_SECONDS, type LogoutContinuations } from './logoutContinuation.js';

/** A Set-Cookie value with the attributes every Gatehouse cookie has (sessions/cookies.ts). */
const setCookie = (name: string, value: string, secure: boolean) => stringifySetCookie({ name, value, ...cookieOptions(secure, CONTINUATION_SECONDS), secure });

/**
 * Ends a Gatehouse session as signing out does (sessions/endSession.ts: revoked, audited, and where the
 * browser goes next: the upstream IdP's end-session URL when it has one). The composition root provides
 * it: talking to IdPs is authenticate/'s, which provide/ never imports.
 */
export type EndGatehouseSession = (request: FastifyRequest, current: CurrentSession, appId: string | undefined) => Promise<SessionEnded>;

export interface LogoutDeps {
  endSession: EndGatehouseSession;
  continuations: Pick<LogoutContinuations, 'issue'>;
  cookies: Pick<CookieNames, 'signOutState' | 'logoutContinuation'>;
  secureCookies: boolean;
  /** The request being answered, with the browser's Gatehouse session. */
  request(): (FastifyRequest & { currentSession(): Promise<CurrentSession | undefined> }) | undefined;
  /** The app of a client id, for the audit log. */
  appIdOf(clientId: string | undefined): string | undefined;
}

/** What oidc-provider keeps of the end-session request until it is confirmed (its session's `state`). */
interface PendingLogout {
  clientId?: string;
  postLogoutRedirectUri?: string;
  state?: string;
}

/**
 * RP-Initiated Logout ends the Gatehouse session, not only the OP's, and the upstream IdP's session as
 * Gatehouse's own sign-out does: once the person confirmed ("Sign out", `logout=yes`), after
 * oidc-provider wrote its answer. The session's end is what tells the other apps (their grants end with
 * it, back-channel logout). When the IdP has an end-session endpoint, the browser goes there first
 * (with the sign-out state cookie, as authenticate/signOut.ts sets it), comes back to /signed-out, and
 * continues to the app's post-logout URI with its state (provide/logoutContinuation.ts); otherwise
 * oidc-provider's answer stands and sends it straight to the app. "Stay signed in" ends only the asking
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
    const ended = await deps.endSession(request, current, deps.appIdOf(oidc.client?.clientId));
    if (ended.logoutState === undefined) return;
    const pending = (oidc.session?.state ?? {}) as PendingLogout;
    const cookies = [setCookie(deps.cookies.signOutState, ended.logoutState, deps.secureCookies)];
    if (pending.clientId && pending.postLogoutRedirectUri) {
      const continuation = await deps.continuations.issue({
        clientId: pending.clientId,
        postLogoutRedirectUri: pending.postLogoutRedirectUri,
        state: typeof pending.state === 'string' ? pending.state : undefined,
        idpState: ended.logoutState,
      });
      cookies.push(setCookie(deps.cookies.logoutContinuation, continuation, deps.secureCookies));
    }
    ctx.append('Set-Cookie', cookies);
    // A 303 still: the IdP's end-session endpoint is asked with GET.
    ctx.redirect(ended.location);
  });
}
