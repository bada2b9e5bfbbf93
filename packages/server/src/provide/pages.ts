import { pages } from '@gatehouse/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { AppError, newReference } from '../errors.js';
import { errorPage, escapeHtml, htmlPage, PAGE_SECURITY_HEADERS } from '../http/html.js';
import type { ProvidePages } from './configuration.js';

/**
 * The security headers of every answer oidc-provider writes (provide/mount.ts sets them before it
 * answers), in place of the portal's (helmet's, whose `script-src 'self'` would let any of the portal's
 * scripts run): the pages' own (http/html.ts), with a `script-src` that allows nothing yet. The pages
 * drawn below set theirs again. The one page oidc-provider draws itself is the auto-submitting form of
 * `response_mode=form_post` (and of two of its logout steps), which runs one
 * inline script: oidc-provider adds that script's SHA-256 to the `script-src` it finds
 * (helpers/script_src_sha.js), so that page runs exactly that script and nothing else — no
 * 'unsafe-inline', no 'self' — and its form still has a Continue button without JavaScript. An empty
 * source list matches nothing (CSP Level 3, "Source Lists"): without the hash, no script runs.
 * No `form-action`: the form posts to the app's redirect URI, another origin.
 */
export const OP_ANSWER_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...PAGE_SECURITY_HEADERS,
  'content-security-policy': "default-src 'none'; script-src; base-uri 'none'; frame-ancestors 'none'",
});

/**
 * The pages oidc-provider would draw itself, in Gatehouse's design and catalogue instead: an error a
 * person's browser brought (an unknown client, a redirect URI not registered) is `oidc_request_invalid`
 * with a reference id in the log; the logout question and the signed-out page are Gatehouse's cards.
 * oidc-provider's own description (never a secret: it describes the request) is shown as the reason.
 */
export function housePages(log: FastifyBaseLogger, reference: () => string | undefined): ProvidePages {
  const headers = (ctx: KoaContextWithOIDC) => {
    for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) ctx.set(name, value);
    ctx.set('cache-control', 'no-store');
    ctx.type = 'html';
  };
  return {
    error(ctx, out, app) {
      const ref = reference() ?? newReference();
      const error = new AppError('oidc_request_invalid', {
        params: { ...(app ? { app: app.name } : {}), ...(out.error_description ? { reason: out.error_description } : {}) },
      });
      log.info({ reference: ref, code: error.code, oauthError: out.error, description: out.error_description, status: ctx.status }, 'OpenID Provider request refused');
      headers(ctx);
      // oidc-provider sets the OAuth status (400 for a bad request); a server error stays a 500.
      if (ctx.status < 400) ctx.status = 400;
      ctx.body = errorPage({ title: error.title, message: error.message, code: error.code, reference: ref, retryUrl: pages.home.path, retryLabel: 'Go to Gatehouse' });
    },
    logoutConfirm(ctx, form, app) {
      headers(ctx);
      // The form oidc-provider made (its action and the one-time xsrf value), and the two answers to it.
      ctx.body = htmlPage({
        title: 'Sign out',
        body: `<h1>Sign out of Gatehouse?</h1>
<p>${escapeHtml(app?.name ?? 'An app')} asks to sign you out. This ends your Gatehouse session: you will be signed out of the other apps you opened with it too.</p>
${form}
<div class="actions">
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>
</div>`,
      });
    },
    loggedOut(ctx, app) {
      headers(ctx);
      ctx.body = htmlPage({
        title: 'Signed out',
        body: `<h1>You are signed out</h1>
<p>You signed out${app ? ` of ${escapeHtml(app.name)}` : ''} and of Gatehouse.</p>
<div class="actions"><a class="button" href="${escapeHtml(pages.signIn.path)}">Sign in again</a></div>`,
      });
    },
  };
}
