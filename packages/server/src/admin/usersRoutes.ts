import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseRoles } from '../accounts/roles.js';
import { describeDevice } from '../api/describeDevice.js';
import { AppError } from '../errors.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { errors, iso, pageQuery, type AdminContext } from './context.js';

/** Users: search and paging, detail, suspension, the admin role, revoking any session. */
export async function usersRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { sessions, audit, database, providers, accounts, resolver } = admin.services;
  const { actorOf, directory, existingUser, summary, withPeople } = admin;
  const userSchema = {
    type: 'object',
    required: ['id', 'email', 'name', 'status', 'admin', 'adminFromConfig', 'createdAt', 'lastSignInAt', 'activeSessions'],
    properties: {
      id: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      status: { type: 'string', enum: ['active', 'suspended'] },
      admin: { type: 'boolean' },
      adminFromConfig: { type: 'boolean' },
      createdAt: { type: 'string', format: 'date-time' },
      lastSignInAt: { type: ['string', 'null'], format: 'date-time' },
      activeSessions: { type: 'integer' },
    },
  } as const;

  app.get('/api/admin/users', {
    schema: {
      tags: ['admin'],
      summary: 'Search and page through users',
      querystring: {
        type: 'object',
        properties: { query: { type: 'string', maxLength: 200 }, status: { type: 'string', enum: ['active', 'suspended'] }, ...pageQuery },
      },
      response: {
        200: { type: 'object', required: ['users', 'total', 'page', 'pageSize'], properties: { users: { type: 'array', items: userSchema }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } } },
        ...errors,
      },
    },
    handler: async (request) => {
      const { query, status, page, pageSize } = request.query as { query?: string; status?: 'active' | 'suspended'; page: number; pageSize: number };
      const result = await directory.search({ query: query?.trim() || undefined, status }, page, pageSize);
      return { users: result.users.map(summary), total: result.total, page, pageSize };
    },
  });

  app.get('/api/admin/users/:userId', {
    schema: { tags: ['admin'], summary: 'A user with identities, active sessions and audit trail', params: { type: 'object', properties: { userId: { type: 'string', maxLength: 64 } } } },
    handler: async (request) => {
      const user = await existingUser((request.params as { userId: string }).userId);
      const [identities, active, events] = await Promise.all([
        accounts.listIdentities(user.id),
        sessions.listActiveForUser(user.id),
        audit.query({ userId: user.id }, 1, 50),
      ]);
      const providerName = (id: string) => providers.name(id);
      return {
        user: summary(user),
        identities: identities.map((identity) => ({
          id: identity.id,
          provider: { id: identity.provider_id, name: providerName(identity.provider_id) },
          subject: identity.subject,
          email: identity.email,
          linkedAt: iso(identity.linked_at),
          lastUsedAt: iso(identity.last_used_at),
        })),
        sessions: active.map((session) => ({
          id: session.id,
          createdAt: iso(session.created_at),
          lastSeenAt: iso(session.last_seen_at),
          expiresAt: iso(SessionStore.expiresAt(session)),
          ip: session.ip,
          userAgent: session.user_agent,
          device: describeDevice(session.user_agent),
          provider: { id: session.provider_id, name: providerName(session.provider_id) },
        })),
        events: await withPeople(events.events),
      };
    },
  });

  async function setStatus(request: FastifyRequest, reply: FastifyReply, status: 'active' | 'suspended') {
    const actor = await actorOf(request);
    const before = await existingUser((request.params as { userId: string }).userId);
    if (status === 'suspended' && before.id === actor.user.id) throw new AppError('bad_request', { params: { reason: 'you cannot suspend yourself' } });
    await database.db.updateTable('users').set({ status, updated_at: Date.now() }).where('id', '=', before.id).execute();
    // Suspending ends every session at once (their next request is signed out; caches are invalidated).
    const ended = status === 'suspended' ? await sessions.revokeAllForUser(before.id, 'suspended') : [];
    await audit.record({
      type: status === 'suspended' ? 'user_suspended' : 'user_reactivated',
      actorUserId: actor.user.id,
      targetUserId: before.id,
      sessionId: actor.session.id,
      request,
      details: { before: { status: before.status }, after: { status }, sessionsEnded: ended.length },
    });
    return reply.status(204).send();
  }

  const userParams = { type: 'object', required: ['userId'], properties: { userId: { type: 'string', maxLength: 64 } } } as const;
  app.post('/api/admin/users/:userId/suspend', { schema: { tags: ['admin'], summary: 'Suspend a user (their sessions end now)', params: userParams } }, (request, reply) =>
    setStatus(request, reply, 'suspended'),
  );
  app.post('/api/admin/users/:userId/reactivate', { schema: { tags: ['admin'], summary: 'Reactivate a suspended user', params: userParams } }, (request, reply) =>
    setStatus(request, reply, 'active'),
  );

  app.put('/api/admin/users/:userId/admin', {
    schema: {
      tags: ['admin'],
      summary: 'Grant or remove the admin role',
      params: userParams,
      body: { type: 'object', required: ['admin'], additionalProperties: false, properties: { admin: { type: 'boolean' } } },
    },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { admin: grant } = request.body as { admin: boolean };
      const before = await existingUser((request.params as { userId: string }).userId);
      const row = (await accounts.getUser(before.id))!;
      const roles = parseRoles(row.roles).filter((role) => role !== 'admin');
      if (!grant) {
        if (before.adminFromConfig) throw new AppError('admin_from_config');
        if (before.admin && (await directory.adminCount()) <= 1) throw new AppError('last_admin');
      }
      const after = grant ? [...roles, 'admin'] : roles;
      await database.db.updateTable('users').set({ roles: JSON.stringify(after), updated_at: Date.now() }).where('id', '=', before.id).execute();
      // Cached sessions carry the old roles.
      for (const session of await sessions.listActiveForUser(before.id)) resolver.invalidate(session.id);
      await audit.record({
        type: grant ? 'admin_granted' : 'admin_revoked',
        actorUserId: actor.user.id,
        targetUserId: before.id,
        sessionId: actor.session.id,
        request,
        details: { before: { roles: parseRoles(row.roles) }, after: { roles: after } },
      });
      return reply.status(204).send();
    },
  });

  app.delete('/api/admin/sessions/:sessionId', {
    schema: { tags: ['admin'], summary: 'Revoke any session', params: { type: 'object', required: ['sessionId'], properties: { sessionId: { type: 'string', maxLength: 64 } } } },
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { sessionId } = request.params as { sessionId: string };
      const session = await sessions.findById(sessionId);
      if (!session || !(await sessions.revoke(sessionId, 'revoked-by-admin'))) throw new AppError('not_found');
      await audit.record({
        type: 'session_revoked',
        actorUserId: actor.user.id,
        targetUserId: session.user_id,
        sessionId: actor.session.id,
        request,
        details: { by: 'admin', reason: 'revoked-by-admin', sessionId },
      });
      return reply.status(204).send();
    },
  });
}
