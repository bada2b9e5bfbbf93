import { endpoints, pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { InForce } from '../config/running.js';
import type { AppConfig, Config } from '../config/schema.js';
import { deniedPage, PAGE_SECURITY_HEADERS } from '../http/html.js';
import type { Secrets } from '../secrets.js';
import type { CookieNames } from '../sessions/cookies.js';
import { csrfToken } from '../sessions/csrf.js';
import { hashSecret } from '../sessions/sessionToken.js';

/** What the 403 page takes: where the portal is, whom to ask, the key CSRF tokens are made with, the app host's cookie. */
export interface DeniedPageDeps {
  portalOrigin: string;
  /** Read at each page: a config reload may change the contact. */
  running: InForce<Pick<Config, 'organization'>>;
  secrets: Pick<Secrets, 'cookieKey'>;
  cookies: Pick<CookieNames, 'appSession'>;
}

/** An app host's CSRF token: bound to its own session token, so it is useless on any other host. */
export function appCsrfToken(deps: Pick<DeniedPageDeps, 'secrets'>, appToken: string | undefined): string {
  return csrfToken(deps.secrets.cookieKey, { secret_hash: `app\u0000${hashSecret(appToken ?? '')}` });
}

/**
 * The 403 page a person sees on an app host (directly behind Gatehouse, or through a proxy that passes
 * the forward-auth answer on): who is signed in, which app said no, whom to ask for access, "Switch
 * account" (a form: it ends the session, then the IdP is asked to let the person choose), "Back to
 * your apps" and "Sign out".
 */
export function sendDeniedPage(
  deps: DeniedPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  { app, email, url }: { app: AppConfig; email: string; url: string },
): FastifyReply {
  return reply
    .status(403)
    .header('cache-control', 'no-store')
    // Threat: clickjacking. A framed 403 page's "Sign out" could be clicked through a decoy; also sent
    // where a proxy passes this page on from forward-auth (whose routes go without helmet).
    .headers(PAGE_SECURITY_HEADERS)
    .type('text/html; charset=utf-8')
    .send(
      deniedPage({
        email,
        appName: app.name,
        reference: request.id,
        switchAccountAction: endpoints.switchAccount,
        returnTo: url,
        appsUrl: `${deps.portalOrigin}${pages.home.path}`,
        contact: deps.running.current.organization.contact,
        signOutAction: endpoints.signOut,
        csrfToken: appCsrfToken(deps, request.cookies[deps.cookies.appSession]),
      }),
    );
}
