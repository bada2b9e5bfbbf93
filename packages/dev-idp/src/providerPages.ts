import { randomBytes } from 'node:crypto';

import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';

import { escapeHtml, htmlPage, pageSecurityHeaders } from './htmlPage.js';

function send(ctx: KoaContextWithOIDC, html: string, scriptNonce?: string): void {
  ctx.set(pageSecurityHeaders(scriptNonce));
  ctx.type = 'html';
  ctx.body = html;
}

/** The pages oidc-provider renders itself (logout, signed out, errors), in the dev IdP's look. */
export function providerPages(idpName: string) {
  const name = escapeHtml(idpName);
  return {
    /**
     * RP-Initiated Logout 1.0 §2 leaves it to the OP whether to ask the user; a first-party relying
     * party asking to end the session should not strand the user on a question, so the form submits
     * itself with `logout=yes` (end the whole IdP session, not only this client's part of it, so the
     * next sign-in shows the form again). When the request names no registered client (no
     * `id_token_hint`, no `client_id`), it may come from any page (logout CSRF), so the question stays.
     */
    async logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
      const client = ctx.oidc.client;
      const button =
        '<button type="submit" form="op.logoutForm" id="continue" name="logout" value="yes">Continue</button>';
      if (!client) {
        send(ctx, htmlPage(`Sign out · ${idpName}`, `<h1>${name}</h1>\n<p>Sign out of ${name}?</p>\n${form}\n${button}`));
        return;
      }
      const nonce = randomBytes(16).toString('base64');
      send(
        ctx,
        htmlPage(
          `Signing out · ${idpName}`,
          `<h1>${name}</h1>
<p>Signing you out of ${name}…</p>
<noscript><p>Press Continue to finish signing out.</p></noscript>
${form}
${button}
<script nonce="${nonce}">document.getElementById('continue').click();</script>`,
        ),
        nonce,
      );
    },

    /** Shown when the relying party gave no `post_logout_redirect_uri`. */
    async postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
      send(ctx, htmlPage(`Signed out · ${idpName}`, `<h1>${name}</h1>\n<p>You are signed out.</p>`));
    },

    /** Replaces the default error page, which pulls a web font from Google. */
    async renderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void> {
      const description = out.error_description ? `<p>${escapeHtml(out.error_description)}</p>` : '';
      send(
        ctx,
        htmlPage(
          `Error · ${idpName}`,
          `<h1>${name}</h1>\n<p class="error" role="alert">${escapeHtml(out.error)}</p>\n${description}`,
        ),
      );
    },
  };
}
