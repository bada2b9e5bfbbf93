import type { FastifyInstance, FastifyRequest } from 'fastify';
import { identityClaims } from '../accounts/accountStore.js';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { requireSession, sessionOf } from '../sessions/requireCsrf.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { describeDevice } from './describeDevice.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const problem = { $ref: 'problem#' } as const;
const errors = { 400: problem, 401: problem, 403: problem, 404: problem, 409: problem } as const;
const provider = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } } as const;
const idParam = (name: string) =>
  ({ type: 'object', required: [name], properties: { [name]: { type: 'string', minLength: 1, maxLength: 64 } } }) as const;

/**
 * The account center's API (`/api/me/...`): a person's own sessions, identities and activity. Reads need
 * the session; changes also need CSRF proof. Response schemas are allow-lists (no token can leak).
 */
export async function meRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { sessions, accounts, audit, providers } = services;
  const providerName = (id: string) => providers.name(id);

  /** A person ended one of their own sessions (from `currentId`). */
  const recordRevokedByUser = (request: FastifyRequest, userId: string, currentId: string, sessionId: string, reason: string) =>
    audit.record({ type: 'session_revoked', actorUserId: userId, targetUserId: userId, sessionId: currentId, request, details: { by: 'user', reason, sessionId } });

  app.addHook('preHandler', requireSession(services));
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.get(paths.api.me.sessions, {
    schema: {
      tags: ['account'],
      summary: 'Your active sessions, most recently used first',
      response: {
        200: {
          type: 'object',
          required: ['sessions'],
          properties: {
            sessions: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'current', 'createdAt', 'lastSeenAt', 'expiresAt', 'ip', 'userAgent', 'device', 'provider'],
                properties: {
                  id: { type: 'string' },
                  current: { type: 'boolean' },
                  createdAt: { type: 'string', format: 'date-time' },
                  lastSeenAt: { type: 'string', format: 'date-time' },
                  expiresAt: { type: 'string', format: 'date-time' },
                  ip: { type: ['string', 'null'] },
                  userAgent: { type: ['string', 'null'] },
                  device: {
                    type: 'object',
                    required: ['browser', 'os', 'type'],
                    properties: {
                      browser: { type: ['string', 'null'] },
                      os: { type: ['string', 'null'] },
                      type: { type: 'string', enum: ['desktop', 'mobile', 'tablet', 'other'] },
                    },
                  },
                  provider,
                },
              },
            },
          },
        },
        ...errors,
      },
    },
    handler: async (request) => {
      const { user, session: current } = await sessionOf(request);
      const list = await sessions.listActiveForUser(user.id);
      return {
        sessions: list.map((session) => ({
          id: session.id,
          current: session.id === current.id,
          createdAt: iso(session.created_at),
          lastSeenAt: iso(session.id === current.id ? current.last_seen_at : session.last_seen_at),
          expiresAt: iso(SessionStore.expiresAt(session)),
          ip: session.ip,
          userAgent: session.user_agent,
          device: describeDevice(session.user_agent),
          provider: { id: session.provider_id, name: providerName(session.provider_id) },
        })),
      };
    },
  });

  app.delete(paths.api.me.session, {
    schema: { tags: ['account'], summary: 'Revoke one of your other sessions', params: idParam('sessionId'), response: { 204: { type: 'null' }, ...errors } },
    handler: async (request, reply) => {
      const { user, session: current } = await sessionOf(request);
      const { sessionId } = request.params as { sessionId: string };
      // The current session ends through sign-out (which also logs out at the IdP), not here.
      if (sessionId === current.id) throw new AppError('bad_request', { params: { reason: 'use Sign out to end this session' } });
      if (!(await sessions.revokeForUser(user.id, sessionId, 'revoked-by-user'))) throw new AppError('not_found');
      await recordRevokedByUser(request, user.id, current.id, sessionId, 'revoked-by-user');
      return reply.status(204).send();
    },
  });

  app.post(paths.api.me.revokeOthers, {
    schema: {
      tags: ['account'],
      summary: 'Sign out everywhere else: revoke every session but this one',
      response: { 200: { type: 'object', required: ['revoked'], properties: { revoked: { type: 'integer' } } }, ...errors },
    },
    handler: async (request) => {
      const { user, session: current } = await sessionOf(request);
      const revoked = await sessions.revokeAllForUser(user.id, 'revoked-by-user', current.id);
      for (const session of revoked) await recordRevokedByUser(request, user.id, current.id, session.id, 'revoked-by-user');
      return { revoked: revoked.length };
    },
  });

  app.get(paths.api.me.identities, {
    schema: {
      tags: ['account'],
      summary: 'The identity providers linked to your account, and those you could link',
      response: {
        200: {
          type: 'object',
          required: ['identities', 'linkable'],
          properties: {
            identities: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'provider', 'subject', 'email', 'linkedAt', 'lastUsedAt', 'current', 'primary'],
                properties: {
                  id: { type: 'string' },
                  provider,
                  subject: { type: 'string' },
                  email: { type: ['string', 'null'] },
                  name: { type: ['string', 'null'] },
                  linkedAt: { type: 'string', format: 'date-time' },
                  lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
                  current: { type: 'boolean' },
                  primary: { type: 'boolean' },
                },
              },
            },
            linkable: { type: 'array', items: provider },
          },
        },
        ...errors,
      },
    },
    handler: async (request) => {
      const { user, session } = await sessionOf(request);
      const identities = await accounts.listIdentities(user.id);
      const linked = new Set(identities.map((identity) => identity.provider_id));
      return {
        identities: identities.map((identity) => ({
          id: identity.id,
          provider: { id: identity.provider_id, name: providerName(identity.provider_id) },
          subject: identity.subject,
          email: identity.email,
          name: identityClaims(identity).name ?? null,
          linkedAt: iso(identity.linked_at),
          lastUsedAt: iso(identity.last_used_at),
          current: identity.id === session.identity_id,
          primary: identity.id === user.primary_identity_id,
        })),
        linkable: providers
          .enabled()
          .filter((candidate) => !linked.has(candidate.id))
          .map((candidate) => ({ id: candidate.id, name: candidate.name })),
      };
    },
  });

  app.delete(paths.api.me.identity, {
    schema: { tags: ['account'], summary: 'Unlink an identity (never the last one)', params: idParam('identityId'), response: { 204: { type: 'null' }, ...errors } },
    handler: async (request, reply) => {
      const { user, session } = await sessionOf(request);
      const { identityId } = request.params as { identityId: string };
      const removed = await accounts.unlink(user.id, identityId);
      if (!removed) throw new AppError('not_found');
      // Sessions signed in through that identity no longer have a way in: they end too.
      const ended = await sessions.revokeForIdentity(removed.id, 'identity-unlinked');
      await audit.record({
        type: 'identity_unlinked',
        actorUserId: user.id,
        targetUserId: user.id,
        sessionId: session.id,
        providerId: removed.provider_id,
        request,
        details: { provider: { id: removed.provider_id, name: providerName(removed.provider_id) }, identityId: removed.id, sessionsEnded: ended.length },
      });
      return reply.status(204).send();
    },
  });

  app.get(paths.api.me.activity, {
    schema: {
      tags: ['account'],
      summary: 'Recent activity on your account, newest first',
      response: {
        200: {
          type: 'object',
          required: ['events'],
          properties: {
            events: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'time', 'type', 'outcome', 'ip', 'userAgent', 'details'],
                properties: {
                  id: { type: 'string' },
                  time: { type: 'string', format: 'date-time' },
                  type: { type: 'string' },
                  outcome: { type: 'string', enum: ['success', 'failure'] },
                  ip: { type: ['string', 'null'] },
                  userAgent: { type: ['string', 'null'] },
                  details: { type: 'object', additionalProperties: true },
                },
              },
            },
          },
        },
        ...errors,
      },
    },
    handler: async (request) => {
      const { user } = await sessionOf(request);
      const events = await audit.forUser(user.id, 20);
      return { events: events.map((event) => ({ ...event, time: iso(event.time) })) };
    },
  });
}
