import { oidcEndpoints, pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { AppError } from '../errors.js';
import type { CookieNames } from '../sessions/cookies.js';
import { cookieOptions } from '../sessions/cookies.js';
import type { RequestNotes } from '../operations/observe.js';
import { decide, grantIdFor, noteAccess, sessionOfGrant, type ProvideAccessDeps } from './access.js';
import type { OidcClientCatalogue } from './clients.js';
import { asIssuerSees } from './forwarded.js';

export interface LoginDeps extends Pick<ProvideAccessDeps, 'providers' | 'running'> {
  /** The provider in force (a key rotation builds a new one: provide/index.ts). */
  provider(): Provider;
  clients: OidcClientCatalogue;
  portalOrigin: string;
  cookies: Pick<CookieNames, 'chooseAccount'>;
  secureCookies: boolean;
  /** How long the sign-in that forces a new authentication may take (signIn.attemptLifetime). */
  attemptLifetime(): number;
  /** The access log's app and decision of the step (operations/observe.ts). */
  notes: RequestNotes;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * `GET /oidc/interaction/:uid`, the login step: no second login, the Gatehouse session is the login.
 * Signed in, the person goes straight back to the app; signed out, to the portal's sign-in (provider
 * choice, linking rules, as always) with this step as where to return, and on from here when they come
 * back. `prompt=login` and `max_age` (a sign-in older than asked) send them through the IdP again: the
 * step finishes only with a Gatehouse session signed in after it began, and the IdP is asked to let the
 * person choose (the "Switch account" sign-in). A person the app's policy refuses sees the 403 page
 * naming the app (with `prompt=none` the app got `access_denied` before any step: configuration.ts).
 */
export function loginStep(deps: LoginDeps) {
  return async function handler(request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) {
    const provider = deps.provider();
    asIssuerSees(request, deps.portalOrigin);
    let details: Awaited<ReturnType<Provider['interactionDetails']>>;
    try {
      details = await provider.interactionDetails(request.raw, reply.raw);
    } catch (error) {
      // No interaction cookie, an expired or unknown step: nothing to go back to but the app.
      throw new AppError('oidc_request_invalid', { cause: error, params: { reason: 'this sign-in step has expired or was already finished. Start again from the app' } });
    }
    // The step in the address is the one this browser's cookie names (oidc-provider checks it too).
    if (details.uid !== request.params.uid) throw new AppError('oidc_request_invalid', { params: { reason: 'this sign-in step belongs to another sign-in' } });
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : undefined;
    const found = clientId ? deps.clients.client(clientId) : undefined;
    if (!found) throw new AppError('oidc_request_invalid', { params: { reason: 'the app is not known here any more' } });
    deps.notes.app(request.raw, found.app.id);

    const current = await request.currentSession();
    // Signed out, the step sends the person to sign in: `unauthenticated`, as the proxy says it.
    if (!current) noteAccess(deps.notes, request.raw, found.app, 'unauthenticated', undefined);
    const here = oidcEndpoints.interactionUrl(details.uid);
    const reply303 = (location: string) => reply.header('cache-control', 'no-store').redirect(location, 303);
    const finish = async (result: Parameters<Provider['interactionResult']>[2]) =>
      reply303(await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: false }));

    const { prompt } = details;
    if (prompt.name === 'login') {
      const reauthenticate = prompt.reasons.includes('login_prompt') || prompt.reasons.includes('max_age');
      // Signed in since this step began: a sign-in made for it. The step's iat is whole seconds, so a
      // sign-in made in the same second just before the step counts too: the session is under a second
      // older than asked, never more.
      const fresh = current !== undefined && details.iat !== undefined && current.session.created_at >= details.iat * 1000;
      if (!current || (reauthenticate && !fresh)) {
        if (current) reply.setCookie(deps.cookies.chooseAccount, '1', cookieOptions(deps.secureCookies, Math.ceil(deps.attemptLifetime() / 1000)));
        return reply303(pages.signIn.href(here));
      }
      return finish({ login: { accountId: current.user.id, ts: seconds(current.session.created_at), remember: false } });
    }
    if (!current) return reply303(pages.signIn.href(here));
    if (prompt.name === 'gatehouse_policy') {
      const decision = decide(deps, current, found.app);
      noteAccess(deps.notes, request.raw, found.app, decision, current);
      if (!decision.allow) throw new AppError('oidc_access_denied', { params: { app: found.app.name, email: current.user.email } });
      // Allowed by now (the policy changed meanwhile): the authorization asks it again on its way back.
      return finish({});
    }
    if (prompt.name === 'consent' && !found.oidc.thirdParty) {
      // An app of the organisation asked for consent (prompt=consent, as offline_access needs): nothing
      // to ask, the grant of this Gatehouse session (configuration.ts, loadExistingGrant) is confirmed.
      const existing = details.grantId && sessionOfGrant(details.grantId) === current.session.id ? await provider.Grant.find(details.grantId) : undefined;
      const grant = existing ?? new provider.Grant({ jti: grantIdFor(current.session.id), accountId: current.user.id, clientId: found.clientId } as never);
      const requested = String(details.params.scope ?? '')
        .split(' ')
        .filter((scope) => (found.oidc.scopes as readonly string[]).includes(scope));
      grant.addOIDCScope(requested.join(' '));
      return finish({ consent: { grantId: await grant.save() } });
    }
    if (prompt.name === 'consent') {
      // A third-party client: the person is asked on the consent page (provide/consent.ts answers it).
      // The step is tied to this Gatehouse session by the grant id it will grant on, which names the
      // session (access.ts): the grant found before (fewer scopes than asked) if it is this session's,
      // else a new one. Only this session may then read or answer the step.
      if (sessionOfGrant(details.grantId) !== current.session.id) {
        details.grantId = grantIdFor(current.session.id);
        await details.save(Math.max(1, (details.exp ?? 0) - seconds(Date.now())));
      }
      return reply303(pages.authorize.href(details.uid));
    }
    throw new AppError('oidc_request_invalid', { params: { app: found.app.name, reason: `the sign-in step “${prompt.name}” is not one Gatehouse answers` } });
  };
}
