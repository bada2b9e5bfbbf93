import { parseEmail, routes, type AdminApp, type AuditEventType } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { identityClaims } from '../accounts/accountStore.js';
import { identityGroups } from '../accounts/effectiveGroups.js';
import { clientIdOf } from '../apps/appRegistry.js';
import type { ClientSecretView } from '../apps/clientSecretStore.js';
import { evaluatePolicy, policySubject, type PolicyDecision, type PolicySubject } from '../authorize/policy.js';
import { LOOPBACK_PROXIES, type AppConfig, type Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import { contractRoute, noContent, typed } from '../http/contract.js';
import { iso } from '../http/isoTime.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { AdminContext } from './context.js';

const result = (decision: PolicyDecision) => ({ allow: decision.allow, reason: decision.reason, decidedBy: decision.decidedBy });
/** What a policy was evaluated against, as the answer shows it. */
const subjectView = (subject: PolicySubject) => ({ email: subject.email, groups: [...subject.groups], roles: [...subject.roles], claims: { ...subject.claims } });

/** Apps and their policies (apps from gatehouse.yaml are read-only), and the policy tester. */
export async function appsRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'running' | 'audit' | 'apps' | 'appStore' | 'clientSecrets' | 'accounts' | 'providers' | 'actorOf'> }) {
  const app = typed(instance);
  const { running, audit, apps, appStore, clientSecrets, accounts, providers } = admin;
  const { actorOf } = admin;

  // What the console fills each app's nginx, Caddy and Traefik configuration with.
  app.route({
    ...contractRoute(routes.admin.getForwardAuthSetup),
    handler: async () => forwardAuthSetup(running.current),
  });

  // Apps and their policies. Apps from gatehouse.yaml are listed read-only ("source": "config").
  const appView = (app: AppConfig): AdminApp => {
    const source = apps.source(app.id) ?? 'console';
    return { ...app, oidc: oidcView(app, source), source };
  };

  app.route({
    ...contractRoute(routes.admin.listApps),
    handler: async () => ({ apps: apps.all().map(appView) }),
  });

  app.route({
    ...contractRoute(routes.admin.createApp),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const created = await appStore.create(request.body);
      await recordAppChange(request, actor, 'app_created', created.id, { before: null, after: created });
      return reply.status(201).send(appView(created));
    },
  });

  app.route({
    ...contractRoute(routes.admin.updateApp),
    handler: async (request) => {
      const actor = await actorOf(request);
      const { appId } = request.params;
      const { before, after } = await appStore.update(appId, request.body);
      await recordAppChange(request, actor, 'app_updated', appId, { before, after });
      return appView(after);
    },
  });

  app.route({
    ...contractRoute(routes.admin.deleteApp),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { appId } = request.params;
      const before = await appStore.remove(appId);
      await recordAppChange(request, actor, 'app_deleted', appId, { before, after: null });
      return noContent(reply);
    },
  });

  // A console app's OpenID Connect client secrets: listed by hint, made by Gatehouse (shown once), revoked.
  const secretView = async (secret: ClientSecretView) => {
    const email = secret.createdBy ? (await accounts.emailsOf([secret.createdBy])).get(secret.createdBy) : undefined;
    return { id: secret.id, hint: secret.hint, createdAt: iso(secret.createdAt), createdBy: secret.createdBy ? { id: secret.createdBy, email: email ?? null } : null };
  };

  app.route({
    ...contractRoute(routes.admin.listClientSecrets),
    handler: async (request) => {
      const listed = await clientSecrets.list(request.params.appId);
      const emails = await accounts.emailsOf([...new Set(listed.flatMap((secret) => (secret.createdBy ? [secret.createdBy] : [])))]);
      return {
        secrets: listed.map((secret) => ({
          id: secret.id,
          hint: secret.hint,
          createdAt: iso(secret.createdAt),
          createdBy: secret.createdBy ? { id: secret.createdBy, email: emails.get(secret.createdBy) ?? null } : null,
        })),
      };
    },
  });

  app.route({
    ...contractRoute(routes.admin.createClientSecret),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { appId } = request.params;
      const { secret, view } = await clientSecrets.create(appId, actor.user.id);
      // The hint and the id only: the secret itself is in this answer alone.
      await audit.record({ type: 'client_secret_created', actorUserId: actor.user.id, sessionId: actor.session.id, appId, request, details: { id: view.id, hint: view.hint } });
      // Never kept by a cache or a proxy on the way: the one time it is shown.
      return reply.status(201).header('cache-control', 'no-store').send({ ...(await secretView(view)), secret });
    },
  });

  app.route({
    ...contractRoute(routes.admin.revokeClientSecret),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { appId, secretId } = request.params;
      const revoked = await clientSecrets.revoke(appId, secretId);
      await audit.record({ type: 'client_secret_revoked', actorUserId: actor.user.id, sessionId: actor.session.id, appId, request, details: { id: revoked.id, hint: revoked.hint } });
      return noContent(reply);
    },
  });

  async function recordAppChange(request: FastifyRequest, actor: CurrentSession, type: AuditEventType, appId: string, change: { before: unknown; after: unknown }) {
    await audit.record({ type, actorUserId: actor.user.id, sessionId: actor.session.id, appId, request, details: change });
  }

  // The policy tester: would this person (a user, or typed-in claims) reach this app, and which rule decides?
  app.route({
    ...contractRoute(routes.admin.testPolicy),
    handler: async (request) => {
      const { body } = request;
      const target = apps.get(body.appId);
      if (!target) throw new AppError('not_found');
      // The draft from the console's form when given (checked by the contract like a saved one), else the saved policy.
      const policy = body.policy ?? target.policy;
      if (body.userId) {
        const user = await accounts.getUser(body.userId);
        if (!user) throw new AppError('not_found');
        // A session sees one identity's groups and claims (as it last reported them), and only the
        // groups its provider is trusted for: decide per identity, as each sign-in would. The answer
        // is the first identity that would be let in, else the one used last.
        const identities = await accounts.listIdentities(user.id);
        const outcomes = identities.map((identity) => {
          const claims = identityClaims(identity);
          const subject = policySubject(running.current.admins, user, identityGroups(providers, identity, claims));
          return { identity, subject, decision: evaluatePolicy(policy, subject) };
        });
        const lastUsed = outcomes.reduce<(typeof outcomes)[number] | undefined>((last, outcome) => (!last || (outcome.identity.last_used_at ?? 0) > (last.identity.last_used_at ?? 0) ? outcome : last), undefined);
        const chosen = outcomes.find((outcome) => outcome.decision.allow) ?? lastUsed;
        if (!chosen) {
          const subject = policySubject(running.current.admins, user, { providerId: undefined, asserted: [], counted: [], claims: {} });
          return { ...result(evaluatePolicy(policy, subject)), subject: subjectView(subject), provider: null };
        }
        const provider = { id: chosen.identity.provider_id, name: providers.name(chosen.identity.provider_id) };
        return { ...result(chosen.decision), subject: subjectView(chosen.subject), provider };
      }
      if (!body.subject) throw new AppError('bad_request', { params: { reason: 'give userId or subject' } });
      // The email a sign-in would have produced: the one normaliser, refusing what a sign-in refuses.
      const email = parseEmail(body.subject.email);
      if (!email.ok) throw new AppError('bad_request', { params: { reason: `subject.email ${email.reason}` } });
      const subject: PolicySubject = { email: email.email, groups: body.subject.groups ?? [], roles: body.subject.roles ?? [], claims: body.subject.claims ?? {} };
      return { ...result(evaluatePolicy(policy, subject)), subject: subjectView(subject), provider: null };
    },
  });
}

/**
 * An app's oidc block as the console shows it: every setting with its default, the client id filled in,
 * and never a secret (the registry keeps none of a config app's; the console's are in their own table).
 */
function oidcView(app: AppConfig, source: 'config' | 'console'): AdminApp['oidc'] {
  if (!app.oidc) return undefined;
  const { secrets: _secrets, ...settings } = app.oidc;
  return { ...settings, clientId: clientIdOf(app), secretsFromConfig: source === 'config' };
}

/**
 * Where a proxy on this machine reaches Gatehouse, and whom Gatehouse believes. A wildcard or `localhost`
 * listener is reached at 127.0.0.1 (nginx resolves `localhost` to both loopback addresses and would try
 * ::1 too); another proxy elsewhere uses whatever address reaches this machine, which the console says.
 */
export function forwardAuthSetup({ listen, trustedProxies, mode }: Pick<Config, 'listen' | 'trustedProxies' | 'mode'>) {
  const host = ['localhost', '0.0.0.0', '::', '[::]'].includes(listen.host) ? '127.0.0.1' : listen.host.includes(':') && !listen.host.startsWith('[') ? `[${listen.host}]` : listen.host;
  return {
    gatehouseAddress: `${host}:${listen.port}`,
    trustedProxies: [...trustedProxies],
    trustedProxiesDefault: mode === 'development' && trustedProxies.length === LOOPBACK_PROXIES.length && trustedProxies.every((entry, index) => entry === LOOPBACK_PROXIES[index]),
    mode,
  };
}
