import { routes, type AuditEventType } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { previewDiscovery } from '../providers/discoveryPreview.js';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { contractRoute, noContent, typed } from '../http/contract.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { type AdminContext } from './context.js';
import { presetViews } from '../providers/providerPresets.js';
import { providerAuditView, providerView } from '../providers/providerView.js';

/**
 * Identity providers: every one listed (those from gatehouse.yaml read-only), a discovery preview
 * before one is added, and create, replace, turn on or off and delete for the console's own. Credentials
 * are write-only; every change is an audit event with the definition before and after, redacted.
 */
export async function providersRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'audit' | 'providers' | 'providerStore' | 'accounts' | 'sessions' | 'portalOrigin' | 'actorOf' | 'reviewAdmission'> }) {
  const app = typed(instance);
  const { audit, providers, providerStore, accounts, sessions, portalOrigin } = admin;
  const { actorOf } = admin;
  const view = async (provider: ProviderConfig) => providerView(provider, providers, portalOrigin, (await accounts.identityCounts()).get(provider.id) ?? 0);

  app.route({
    ...contractRoute(routes.admin.listProviders),
    handler: async () => {
      const counts = await accounts.identityCounts();
      return { providers: providers.all().map((provider) => providerView(provider, providers, portalOrigin, counts.get(provider.id) ?? 0)) };
    },
  });

  app.route({
    ...contractRoute(routes.admin.listProviderPresets),
    handler: async () => ({ presets: presetViews(portalOrigin) }),
  });

  app.route({
    ...contractRoute(routes.admin.discoverProvider),
    handler: async (request) => previewDiscovery(request.body.issuer.trim()),
  });

  app.route({
    ...contractRoute(routes.admin.createProvider),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const created = await providerStore.create(request.body);
      await recordChange(request, actor, 'provider_created', created, { before: null, after: providerAuditView(created) });
      return reply.status(201).send(await view(created));
    },
  });

  app.route({
    ...contractRoute(routes.admin.updateProvider),
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params;
      const { before, after, replaced } = await providerStore.update(providerId, request.body);
      // A narrower rule (a domain, a tenant, a Workspace domain, an organisation removed) counts for the
      // people signed in with it now, not from their next sign-in on.
      const sessionsEnded = await admin.reviewAdmission({ providers: [providerId] }, { by: 'console', actorUserId: actor.user.id, request });
      await recordChange(request, actor, 'provider_updated', after, { before: providerAuditView(before), after: providerAuditView(after, replaced), sessionsEnded });
      return view(after);
    },
  });

  app.route({
    ...contractRoute(routes.admin.enableProvider),
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params;
      const { before, after } = await providerStore.setEnabled(providerId, true);
      await recordChange(request, actor, 'provider_enabled', after, { before: { enabled: before.enabled }, after: { enabled: true } });
      return view(after);
    },
  });

  app.route({
    ...contractRoute(routes.admin.disableProvider),
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params;
      // Checked before anything changes: turning off your own way in would sign you out.
      if (actor.session.provider_id === providerId && providers.source(providerId) === 'console') {
        throw new AppError('self_lockout', { params: { reason: `you are signed in with ${providers.name(providerId)}; sign in with another provider first` } });
      }
      const { before, after } = await providerStore.setEnabled(providerId, false);
      // Fail closed: whoever signed in through it is signed out now, not at their next claims check.
      const ended = await sessions.revokeForProvider(providerId, 'provider-disabled');
      await recordChange(request, actor, 'provider_disabled', after, { before: { enabled: before.enabled }, after: { enabled: false }, sessionsEnded: ended.length });
      return view(after);
    },
  });

  app.route({
    ...contractRoute(routes.admin.publishProvider),
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params;
      // The body's `untested: true` is the admin's confirmation (checked by the contract): offered to
      // people although no test sign-in with it passed.
      if (await providerStore.publish(providerId, 'admin')) {
        const provider = providers.find(providerId)!;
        await recordChange(request, actor, 'provider_published', provider, { how: 'admin', untested: true });
      }
      return view(providers.find(providerId)!);
    },
  });

  app.route({
    ...contractRoute(routes.admin.deleteProvider),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { providerId } = request.params;
      const before = await providerStore.remove(providerId);
      await recordChange(request, actor, 'provider_deleted', before, { before: providerAuditView(before), after: null });
      return noContent(reply);
    },
  });

  async function recordChange(request: FastifyRequest, actor: CurrentSession, type: AuditEventType, provider: ProviderConfig, details: Record<string, unknown>) {
    await audit.record({
      type,
      actorUserId: actor.user.id,
      sessionId: actor.session.id,
      providerId: provider.id,
      request,
      details: { provider: { id: provider.id, name: provider.name }, ...details },
    });
  }
}
