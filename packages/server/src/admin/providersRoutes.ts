import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditType } from '../audit/auditLog.js';
import { previewDiscovery } from '../authenticate/discoveryPreview.js';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { errors, type AdminContext } from './context.js';
import { discoveryPreviewSchema } from './discoveryPreviewSchema.js';
import { providerAuditView, providerView, providerViewSchema } from './providerView.js';

/**
 * Identity providers: every one listed (those from gatehouse.yaml read-only), a discovery preview
 * before one is added, and create, replace, turn on or off and delete for the console's own. Credentials
 * are write-only; every change is an audit event with the definition before and after, redacted.
 */
export async function providersRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { audit, providers, providerStore, accounts, sessions, portalOrigin } = admin.services;
  const { actorOf } = admin;
  const providerParams = {
    type: 'object',
    required: ['providerId'],
    properties: { providerId: { type: 'string', maxLength: 64 } },
  } as const;
  const view = async (provider: ProviderConfig) => providerView(provider, providers, portalOrigin, (await accounts.identityCounts()).get(provider.id) ?? 0);

  app.get('/api/admin/providers', {
    schema: {
      tags: ['admin'],
      summary: 'Every identity provider with its discovery status and sign-in rules; config providers are read-only; credentials never',
      response: { 200: { type: 'object', required: ['providers'], properties: { providers: { type: 'array', items: providerViewSchema } } }, ...errors },
    },
    handler: async () => {
      const counts = await accounts.identityCounts();
      return { providers: providers.all().map((provider) => providerView(provider, providers, portalOrigin, counts.get(provider.id) ?? 0)) };
    },
  });

  app.post('/api/admin/providers/discover', {
    schema: {
      tags: ['admin'],
      summary: "Fetch an issuer's OpenID Connect discovery document and summarise it (endpoints, PKCE S256, PAR, back-channel logout)",
      body: { type: 'object', required: ['issuer'], additionalProperties: false, properties: { issuer: { type: 'string', minLength: 1, maxLength: 2048 } } },
      response: { 200: discoveryPreviewSchema, ...errors, 502: { $ref: 'problem#' } },
    },
    handler: async (request) => previewDiscovery((request.body as { issuer: string }).issuer.trim()),
  });

  app.post('/api/admin/providers', {
    schema: {
      tags: ['admin'],
      summary: 'Create a provider (validated like a providers: entry in gatehouse.yaml; its issuer must answer discovery)',
      body: { type: 'object' },
      response: { 201: providerViewSchema, ...errors, 502: { $ref: 'problem#' } },
    },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const created = await providerStore.create(request.body);
      await recordChange(request, actor, 'provider_created', created, { before: null, after: providerAuditView(created) });
      return reply.status(201).send(await view(created));
    },
  });

  app.put('/api/admin/providers/:providerId', {
    schema: {
      tags: ['admin'],
      summary: 'Replace a console provider; a credential left out is kept, the on/off state is changed by enable/disable',
      params: providerParams,
      body: { type: 'object' },
      response: { 200: providerViewSchema, ...errors, 502: { $ref: 'problem#' } },
    },
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params as { providerId: string };
      const { before, after, replaced } = await providerStore.update(providerId, request.body);
      await recordChange(request, actor, 'provider_updated', after, { before: providerAuditView(before), after: providerAuditView(after, replaced) });
      return view(after);
    },
  });

  app.post('/api/admin/providers/:providerId/enable', {
    schema: { tags: ['admin'], summary: 'Offer a console provider on the sign-in page again', params: providerParams, response: { 200: providerViewSchema, ...errors } },
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params as { providerId: string };
      const { before, after } = await providerStore.setEnabled(providerId, true);
      await recordChange(request, actor, 'provider_enabled', after, { before: { enabled: before.enabled }, after: { enabled: true } });
      return view(after);
    },
  });

  app.post('/api/admin/providers/:providerId/disable', {
    schema: {
      tags: ['admin'],
      summary: 'Turn a console provider off: no sign-in with it from the next request on, and its sessions end now',
      params: providerParams,
      response: { 200: providerViewSchema, ...errors },
    },
    handler: async (request) => {
      const actor = await actorOf(request);
      const { providerId } = request.params as { providerId: string };
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

  app.delete('/api/admin/providers/:providerId', {
    schema: { tags: ['admin'], summary: 'Delete a console provider nobody has signed in with (turn it off otherwise)', params: providerParams, response: { 204: { type: 'null' }, ...errors } },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { providerId } = request.params as { providerId: string };
      const before = await providerStore.remove(providerId);
      await recordChange(request, actor, 'provider_deleted', before, { before: providerAuditView(before), after: null });
      return reply.status(204).send();
    },
  });

  async function recordChange(request: FastifyRequest, actor: CurrentSession, type: AuditType, provider: ProviderConfig, details: Record<string, unknown>) {
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
