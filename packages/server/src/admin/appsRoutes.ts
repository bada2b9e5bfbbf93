import type { FastifyInstance, FastifyRequest } from 'fastify';
import { identityClaims } from '../accounts/accountStore.js';
import { parseEmail } from '../accounts/email.js';
import { policySubject } from '../accounts/admins.js';
import { identityGroups } from '../accounts/effectiveGroups.js';
import type { AuditType } from '../audit/auditLog.js';
import { evaluatePolicy, type PolicyDecision, type PolicySubject } from '../authorize/policy.js';
import type { AppConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import type { AdminContext } from './context.js';

const result = (decision: PolicyDecision) => ({ allow: decision.allow, reason: decision.reason, decidedBy: decision.decidedBy });

/** Apps and their policies (apps from gatehouse.yaml are read-only), and the policy tester. */
export async function appsRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { config, audit, apps } = admin.services;
  const { actorOf } = admin;

  // Apps and their policies. Apps from gatehouse.yaml are listed read-only ("source": "config").
  const appView = (app: AppConfig) => ({ ...app, source: apps.source(app.id) ?? 'console' });
  const appParams = { type: 'object', required: ['appId'], properties: { appId: { type: 'string', maxLength: 64 } } } as const;

  app.get('/api/admin/apps', {
    schema: { tags: ['admin'], summary: 'Every protected app with its policy; config apps are read-only' },
    handler: async () => ({ apps: apps.all().map(appView) }),
  });

  app.post('/api/admin/apps', {
    schema: { tags: ['admin'], summary: 'Create an app (validated like an apps: entry in gatehouse.yaml)', body: { type: 'object' } },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const created = await admin.services.appStore.create(request.body);
      await recordAppChange(request, actor, 'app_created', created.id, { before: null, after: created });
      return reply.status(201).send(appView(created));
    },
  });

  app.put('/api/admin/apps/:appId', {
    schema: { tags: ['admin'], summary: 'Replace an app created in the console', params: appParams, body: { type: 'object' } },
    handler: async (request) => {
      const actor = await actorOf(request);
      const { appId } = request.params as { appId: string };
      const { before, after } = await admin.services.appStore.update(appId, request.body);
      await recordAppChange(request, actor, 'app_updated', appId, { before, after });
      return appView(after);
    },
  });

  app.delete('/api/admin/apps/:appId', {
    schema: { tags: ['admin'], summary: 'Delete an app created in the console', params: appParams },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { appId } = request.params as { appId: string };
      const before = await admin.services.appStore.remove(appId);
      await recordAppChange(request, actor, 'app_deleted', appId, { before, after: null });
      return reply.status(204).send();
    },
  });

  async function recordAppChange(request: FastifyRequest, actor: CurrentSession, type: AuditType, appId: string, change: { before: unknown; after: unknown }) {
    await audit.record({ type, actorUserId: actor.user.id, sessionId: actor.session.id, appId, request, details: change });
  }

  // The policy tester: would this person (a user, or typed-in claims) reach this app, and which rule decides?
  app.post('/api/admin/policy-test', {
    schema: {
      tags: ['admin'],
      summary: 'Evaluate an app policy for a user or for given claims, naming the rule that decides',
      body: {
        type: 'object',
        required: ['appId'],
        additionalProperties: false,
        properties: {
          appId: { type: 'string', maxLength: 64 },
          userId: { type: 'string', maxLength: 64 },
          subject: {
            type: 'object',
            additionalProperties: false,
            required: ['email'],
            properties: {
              email: { type: 'string', maxLength: 256 },
              groups: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 500 },
              roles: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 20 },
              claims: { type: 'object', additionalProperties: true },
            },
          },
        },
      },
    },
    handler: async (request) => {
      const body = request.body as { appId: string; userId?: string; subject?: { email: string; groups?: string[]; roles?: string[]; claims?: Record<string, unknown> } };
      const target = apps.get(body.appId);
      if (!target) throw new AppError('not_found');
      if (body.userId) {
        const user = await admin.services.accounts.getUser(body.userId);
        if (!user) throw new AppError('not_found');
        // A session sees one identity's groups and claims (as it last reported them), and only the
        // groups its provider is trusted for: decide per identity, as each sign-in would. The answer
        // is the first identity that would be let in, else the one used last.
        const identities = await admin.services.accounts.listIdentities(user.id);
        const outcomes = identities.map((identity) => {
          const claims = identityClaims(identity);
          const subject = policySubject(config.admins, user, identityGroups(admin.services.providers, identity, claims), claims.extra);
          return { identity, subject, decision: evaluatePolicy(target.policy, subject) };
        });
        const lastUsed = outcomes.reduce<(typeof outcomes)[number] | undefined>((last, outcome) => (!last || (outcome.identity.last_used_at ?? 0) > (last.identity.last_used_at ?? 0) ? outcome : last), undefined);
        const chosen = outcomes.find((outcome) => outcome.decision.allow) ?? lastUsed;
        if (!chosen) {
          const subject = policySubject(config.admins, user, { providerId: undefined, asserted: [], counted: [] });
          return { ...result(evaluatePolicy(target.policy, subject)), subject, provider: null };
        }
        const provider = { id: chosen.identity.provider_id, name: admin.services.providers.name(chosen.identity.provider_id) };
        return { ...result(chosen.decision), subject: chosen.subject, provider };
      }
      if (!body.subject) throw new AppError('bad_request', { params: { reason: 'give userId or subject' } });
      // The email a sign-in would have produced: the one normaliser, refusing what a sign-in refuses.
      const email = parseEmail(body.subject.email);
      if (!email.ok) throw new AppError('bad_request', { params: { reason: `subject.email ${email.reason}` } });
      const subject: PolicySubject = { email: email.email, groups: body.subject.groups ?? [], roles: body.subject.roles ?? [], claims: body.subject.claims ?? {} };
      return { ...result(evaluatePolicy(target.policy, subject)), subject, provider: null };
    },
  });
}
