import { routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { AuditLog } from '../audit/auditLog.js';
import { AppError } from '../errors.js';
import { contractRoute, typed } from '../http/contract.js';
import type { RequestNotes } from '../operations/observe.js';
import { signedIn } from '../sessions/guard.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { sessionOfGrant } from './access.js';
import type { OidcClientApp, OidcClientCatalogue } from './clients.js';

export interface ConsentDeps {
  /** The provider in force (a key rotation builds a new one: provide/index.ts). */
  provider(): Provider;
  clients: OidcClientCatalogue;
  audit: Pick<AuditLog, 'record'>;
  /** The access log's app of a consent request: the client's (operations/observe.ts). */
  notes: Pick<RequestNotes, 'app'>;
}

type Interaction = InstanceType<Provider['Interaction']>;

/** The scopes the authorization asks that the client may have: never more than its `oidc.scopes`. */
export function askedScopes(interaction: Pick<Interaction, 'params'>, found: Pick<OidcClientApp, 'oidc'>): string[] {
  const allowed = new Set<string>(found.oidc.scopes);
  return [...new Set(String(interaction.params.scope ?? '').split(' '))].filter((scope) => allowed.has(scope));
}

/** Whether a login step waits for this session's consent to a third-party client (the login step marked it: login.ts). */
export function ownsConsent(interaction: Pick<Interaction, 'grantId' | 'prompt' | 'session'>, current: CurrentSession): boolean {
  return interaction.prompt.name === 'consent' && sessionOfGrant(interaction.grantId) === current.session.id && interaction.session?.accountId === current.user.id;
}

/**
 * The consent step of a third-party client, for the front end's consent page (`pages.authorize`). The
 * login step (login.ts) ties the pending step to the Gatehouse session by naming it in the step's
 * grant id. The page cannot present oidc-provider's interaction cookie (it is scoped to the login
 * step's path), so the step is found by its uid and answered as oidc-provider's interactionResult
 * does (the result saved on the step, the browser sent to its resume address, where the resume cookie
 * still binds it to the browser that began it); the Gatehouse session stands in for the cookie here.
 */
export function consentRoutes(instance: FastifyInstance, deps: ConsentDeps): void {
  const app = typed(instance);

  /**
   * The pending step of this session, or 404 exactly as for an unknown uid. To answer it (`answering`),
   * a step gone (expired, or finished and resumed: oidc-provider deletes it), answered already (another
   * tab, a double click) or not this session's is said plainly (`oidc_consent_closed`), and nothing changes.
   */
  async function pending(request: FastifyRequest, uid: string, current: CurrentSession, answering: boolean) {
    const interaction = await deps.provider().Interaction.find(uid);
    // Threat: IDOR. A step uid seen elsewhere (a shared screen, a log, a link sent to someone) lets
    // nobody else read or answer it: another session's step answers exactly as one that does not
    // exist (read: 404; answered: the step is not waiting for an answer, 409).
    if (!interaction || !ownsConsent(interaction, current)) throw new AppError(answering ? 'oidc_consent_closed' : 'not_found');
    const clientId = typeof interaction.params.client_id === 'string' ? interaction.params.client_id : undefined;
    const found = clientId ? deps.clients.client(clientId) : undefined;
    // Only a third-party client is ever asked for consent here; an app gone meanwhile grants nothing.
    if (!found || !found.oidc.thirdParty) throw new AppError(answering ? 'oidc_consent_closed' : 'not_found');
    deps.notes.app(request.raw, found.app.id);
    if (answering && interaction.result) throw new AppError('oidc_consent_closed');
    return { interaction, found };
  }

  async function finish(interaction: Interaction, result: Interaction['result']) {
    interaction.result = result;
    const remaining = (interaction.exp ?? 0) - Math.floor(Date.now() / 1000);
    if (remaining <= 0) throw new AppError('oidc_consent_closed');
    await interaction.save(remaining);
    return { location: interaction.returnTo };
  }

  /** The person's answer, in the audit log and their "Recent activity". */
  const recordAnswer = (request: FastifyRequest, current: CurrentSession, found: OidcClientApp, type: 'oidc_consent_given' | 'oidc_consent_refused', scopes: string[]) =>
    deps.audit.record({
      type,
      actorUserId: current.user.id,
      targetUserId: current.user.id,
      sessionId: current.session.id,
      appId: found.app.id,
      request,
      details: { app: { id: found.app.id, name: found.app.name }, scopes },
    });

  app.route({
    ...contractRoute(routes.consent.getConsent),
    handler: async (request) => {
      const current = await signedIn(request);
      const { interaction, found } = await pending(request, request.params.uid, current, false);
      const redirectUri = typeof interaction.params.redirect_uri === 'string' ? interaction.params.redirect_uri : found.oidc.redirectUris[0]!;
      return {
        uid: interaction.uid,
        app: { id: found.app.id, name: found.app.name },
        origin: new URL(redirectUri).origin,
        scopes: askedScopes(interaction, found),
        person: { email: current.user.email, name: current.user.name },
      };
    },
  });

  app.route({
    ...contractRoute(routes.consent.allowConsent),
    handler: async (request) => {
      const current = await signedIn(request);
      const { interaction, found } = await pending(request, request.params.uid, current, true);
      const provider = deps.provider();
      // The grant of this session (its id names it: access.ts), the one found before if it had fewer
      // scopes; never one of another session.
      const existing = await provider.Grant.find(interaction.grantId!);
      if (existing && (existing.clientId !== found.clientId || existing.accountId !== current.user.id)) throw new AppError('not_found');
      const grant = existing ?? new provider.Grant({ jti: interaction.grantId, accountId: current.user.id, clientId: found.clientId } as never);
      const scopes = askedScopes(interaction, found);
      grant.addOIDCScope(scopes.join(' '));
      const answered = await finish(interaction, { consent: { grantId: await grant.save() } });
      await recordAnswer(request, current, found, 'oidc_consent_given', scopes);
      return answered;
    },
  });

  app.route({
    ...contractRoute(routes.consent.denyConsent),
    handler: async (request) => {
      const current = await signedIn(request);
      const { interaction, found } = await pending(request, request.params.uid, current, true);
      // The app is answered OAuth's access_denied at its redirect URI (RFC 6749 §4.1.2.1).
      const answered = await finish(interaction, { error: 'access_denied', error_description: 'the person refused the app’s request' });
      await recordAnswer(request, current, found, 'oidc_consent_refused', askedScopes(interaction, found));
      return answered;
    },
  });
}
