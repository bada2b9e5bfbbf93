import { endpoints, pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/schema.js';
import { deniedPage, PAGE_SECURITY_HEADERS } from '../http/html.js';
import type { Secrets } from '../secrets.js';
import type { CookieNames } from '../sessions/cookies.js';
import { csrfToken } from '../sessions/csrf.js';
import { hashSecret } from '../sessions/sessionToken.js';

/** What the 403 page takes: where the portal is, the key CSRF tokens are made with, the app host's cookie. */
export interface DeniedPageDeps {
  portalOrigin: string;
  secrets: Pick<Secrets, 'cookieKey'>;
  cookies: Pick<CookieNames, 'appSession'>;
}

/** An app host's CSRF token: bound to its own session token, so it is useless on any other host. */
export function appCsrfToken(services: Pick<DeniedPageDeps, 'secrets'>, appToken: string | undefined): string {
  return csrfToken(services.secrets.cookieKey, { secret_hash: `app\u0000${hashSecret(appToken ?? '')}` });
}

/**
 * The 403 page a person sees on an app host (directly behind Gatehouse, or through a proxy that passes
 * the forward-auth answer on): who is signed in, which app said no, "Switch account" and "Sign out".
 */
export function sendDeniedPage(
  services: DeniedPageDeps,
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
        switchAccountUrl: `${services.portalOrigin}${pages.signIn.path}?rd=${encodeURIComponent(url)}`,
        signOutAction: endpoints.signOut,
        csrfToken: appCsrfToken(services, request.cookies[services.cookies.appSession]),
      }),
    );
}
