import { endpoints, pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkReturnTo } from '../apps/returnTo.js';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { AppSessions } from '../sessions/appSessions.js';
import { cookieOptions, type CookieNames } from '../sessions/cookies.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { isWellFormedSecret, newSecret } from '../sessions/sessionToken.js';
import type { AppRegistry } from '../apps/appRegistry.js';

/**
 * Carrying a portal session to an app on another host without a shared parent domain and without a
 * second trip to the IdP:
 *
 *   app   /.gatehouse/start?rd=…        sets a state cookie on the app host, sends the browser to
 *   portal /.gatehouse/app-authorize    which (signed in) issues a one-time code for that exact origin
 *   app   /.gatehouse/complete?code&state  redeems it (state cookie must match) and sets the app
 *                                        host's own cookie, then goes to rd.
 *
 * The code is single-use, lives ≤ 60 s, is bound to the app origin and the state, and travels with
 * Referrer-Policy: no-referrer.
 */
const STATE_COOKIE_SECONDS = 10 * 60;

/** What the handshake takes: the portal, the apps, the one-time codes and app tokens, the sessions they stand for. */
export interface HandshakeDeps {
  portalOrigin: string;
  secureCookies: boolean;
  cookies: Pick<CookieNames, 'appState' | 'appSession'>;
  running: InForce<{ session: Pick<Config['session'], 'absoluteLifetime'> }>;
  apps: Pick<AppRegistry, 'guarded'>;
  appSessions: Pick<AppSessions, 'issueCode' | 'redeemCode' | 'create'>;
  sessions: Pick<SessionStore, 'findById'>;
}

/**
 * Where on this app a person may be sent back to: the app's own origin only, by the one return-to rule
 * (apps/returnTo.ts). The result is always absolute on the app's origin: the rule never answers
 * a path starting with "//", so `${origin}${target}` cannot name another host.
 */
function appReturnTo(app: AppConfig, rd: unknown): string {
  const origin = new URL(app.publicUrl).origin;
  const target = checkReturnTo(rd, { portalOrigin: origin });
  return target === undefined ? `${origin}/` : `${origin}${target}`;
}

/** App host: `GET /.gatehouse/start?rd=` */
export function appStart(deps: Pick<HandshakeDeps, 'portalOrigin' | 'secureCookies' | 'cookies'>) {
  return async function handler(request: FastifyRequest<{ Querystring: { rd?: string } }>, reply: FastifyReply, app: AppConfig) {
    const state = newSecret();
    const authorize = new URL(endpoints.appAuthorize, deps.portalOrigin);
    authorize.searchParams.set('app', app.id);
    authorize.searchParams.set('state', state);
    authorize.searchParams.set('rd', appReturnTo(app, request.query.rd));
    return reply
      .setCookie(deps.cookies.appState, state, cookieOptions(deps.secureCookies, STATE_COOKIE_SECONDS))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(authorize.href, 303);
  };
}

/** Portal: `GET /.gatehouse/app-authorize?app&state&rd` */
export function appAuthorize(deps: Pick<HandshakeDeps, 'apps' | 'appSessions'>) {
  return async function handler(request: FastifyRequest<{ Querystring: { app?: string; state?: string; rd?: string } }>, reply: FastifyReply) {
    const app = typeof request.query.app === 'string' ? deps.apps.guarded(request.query.app) : undefined;
    if (!app) throw new AppError('not_found');
    const state = request.query.state;
    if (!isWellFormedSecret(state)) throw new AppError('bad_request', { params: { reason: 'missing or malformed state' } });
    const returnTo = appReturnTo(app, request.query.rd);
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');

    const current = await request.currentSession();
    // Not signed in: sign in first and come back to the app, which starts this handshake again.
    if (!current) return reply.redirect(`${pages.signIn.path}?rd=${encodeURIComponent(returnTo)}`, 303);

    const code = await deps.appSessions.issueCode({ sessionId: current.session.id, app, state, returnTo });
    const complete = new URL(endpoints.appComplete, new URL(app.publicUrl).origin);
    complete.searchParams.set('code', code);
    complete.searchParams.set('state', state);
    return reply.redirect(complete.href, 303);
  };
}

/** App host: `GET /.gatehouse/complete?code&state` */
export function appComplete(deps: HandshakeDeps) {
  return async function handler(
    request: FastifyRequest<{ Querystring: { code?: string; state?: string } }>,
    reply: FastifyReply,
    app: AppConfig,
  ) {
    const origin = new URL(app.publicUrl).origin;
    const stateCookie = request.cookies[deps.cookies.appState];
    // The state in the URL must be this browser's own (login CSRF / stolen code defence).
    if (!stateCookie || stateCookie !== request.query.state) throw new AppError('sign_in_expired', { retryUrl: `${origin}/` });
    const code = await deps.appSessions.redeemCode(request.query.code, stateCookie, origin);
    if (!code) throw new AppError('sign_in_expired', { retryUrl: `${origin}/` });
    const session = await deps.sessions.findById(code.session_id);
    if (!session || session.revoked_at !== null) throw new AppError('sign_in_expired', { retryUrl: `${origin}/` });
    const token = await deps.appSessions.create(session.id, app.id, origin);
    const lifetime = Math.max(1, Math.floor((Math.min(session.absolute_expires_at, Date.now() + deps.running.current.session.absoluteLifetime) - Date.now()) / 1000));
    return reply
      .setCookie(deps.cookies.appSession, token, cookieOptions(deps.secureCookies, lifetime))
      .clearCookie(deps.cookies.appState, cookieOptions(deps.secureCookies))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      // Checked again on the way out (the stored value came from appReturnTo; this keeps it so).
      .redirect(appReturnTo(app, code.return_to), 303);
  };
}
