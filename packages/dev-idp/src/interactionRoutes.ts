import type { IncomingMessage, ServerResponse } from 'node:http';

import { errors, type default as Provider } from 'oidc-provider';

import type { DevIdpUser } from './defaultUsers.js';
import { escapeHtml, htmlPage, sendHtml } from './htmlPage.js';
import { loginPage } from './loginPage.js';
import { mediaType, readBody } from './readBody.js';
import type { UserDirectory } from './UserDirectory.js';

/** A login form is two short fields; anything bigger is not one. */
const FORM_LIMIT = 8 * 1024;

const ROUTE = /^\/interaction\/([^/]+)(?:\/(login|abort))?$/;

export interface InteractionRoutesInput {
  provider: Provider;
  users: UserDirectory;
  idpName: string;
  accountHint?: readonly DevIdpUser[];
}

/**
 * The interaction pages oidc-provider sends the browser to (`/interaction/<uid>`): the login form,
 * its submission, and Cancel. Each request is bound to the pending authorization request by the
 * interaction cookie oidc-provider set for exactly this path, which is also what stops another site
 * from completing someone's sign-in (the form needs no CSRF token of its own).
 * The returned handler leaves any other path alone and resolves to false.
 */
export function interactionRoutes({ provider, users, idpName, accountHint }: InteractionRoutesInput) {
  function message(res: ServerResponse, status: number, text: string): void {
    sendHtml(res, status, htmlPage(idpName, `<h1>${escapeHtml(idpName)}</h1>\n<p>${escapeHtml(text)}</p>`));
  }

  async function clientName(clientId: unknown): Promise<string> {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    return client?.clientName ?? client?.clientId ?? 'the application';
  }

  return async function handleInteraction(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    const route = ROUTE.exec(pathname);
    if (!route) return false;
    const [, uid, action] = route;
    const expectedMethod = action === undefined ? 'GET' : 'POST';
    if (req.method !== expectedMethod) {
      res.setHeader('Allow', expectedMethod);
      message(res, 405, 'Method not allowed.');
      return true;
    }

    let interaction;
    try {
      interaction = await provider.interactionDetails(req, res);
    } catch (error) {
      if (!(error instanceof errors.SessionNotFound)) throw error;
      message(res, 400, 'This sign-in request has expired or was already completed. Go back to the application and start again.');
      return true;
    }
    if (interaction.uid !== uid) {
      message(res, 400, 'This sign-in request does not belong to this browser. Go back to the application and start again.');
      return true;
    }

    if (action === 'abort') {
      // The relying party receives error=access_denied (RFC 6749 §4.1.2.1).
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user cancelled the sign-in.' },
        { mergeWithLastSubmission: false },
      );
      return true;
    }

    const { prompt, params } = interaction;
    if (prompt.name === 'consent') {
      // Only reached when the relying party sent prompt=consent: loadExistingGrant has already granted
      // everything requested, so the prompt is answered without a screen.
      await provider.interactionFinished(req, res, { consent: {} }, { mergeWithLastSubmission: true });
      return true;
    }
    // select_account: choosing an account here means signing in with it (see providerConfiguration.ts).
    if (prompt.name !== 'login' && prompt.name !== 'select_account') {
      message(res, 400, 'This sign-in request asks for something this IdP does not support.');
      return true;
    }

    const page = { idpName, uid: interaction.uid, clientName: await clientName(params.client_id), accountHint };
    if (action === undefined) {
      const loginHint = typeof params.login_hint === 'string' ? params.login_hint : undefined;
      sendHtml(res, 200, loginPage({ ...page, login: loginHint }));
      return true;
    }

    if (mediaType(req) !== 'application/x-www-form-urlencoded') {
      message(res, 415, 'Unsupported form encoding.');
      return true;
    }
    const form = new URLSearchParams(await readBody(req, FORM_LIMIT));
    const login = form.get('login') ?? '';
    const user = users.authenticate(login, form.get('password') ?? '');
    if (!user) {
      sendHtml(res, 200, loginPage({ ...page, login, failed: true }));
      return true;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: user.sub, amr: ['pwd'] }, ...(prompt.name === 'select_account' ? { select_account: {} } : {}) },
      { mergeWithLastSubmission: false },
    );
    return true;
  };
}
