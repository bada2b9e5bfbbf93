import { routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { identityView } from '../accounts/identityView.js';
import { parseRoles } from '../accounts/roles.js';
import { sessionView } from '../sessions/sessionView.js';
import { AppError } from '../errors.js';
import { contractRoute, noContent, typed } from '../http/contract.js';
import { type AdminContext } from './context.js';

/** Users: search and paging, detail, suspension, the admin role, revoking any session. */
export async function usersRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'sessions' | 'audit' | 'providers' | 'accounts' | 'changes' | 'actorOf' | 'directory' | 'existingUser' | 'summary' | 'withPeople'> }) {
  const app = typed(instance);
  const { sessions, audit, providers, accounts, changes } = admin;
  const { actorOf, directory, existingUser, summary, withPeople } = admin;
  app.route({
    ...contractRoute(routes.admin.listUsers),
    handler: async (request) => {
      const { query, status, page, pageSize } = request.query;
      const result = await directory.search({ query: query?.trim() || undefined, status }, page, pageSize);
      return { users: result.users.map(summary), total: result.total, page, pageSize };
    },
  });

  app.route({
    ...contractRoute(routes.admin.getUser),
    handler: async (request) => {
      const user = await existingUser(request.params.userId);
      const [identities, active, events] = await Promise.all([
        accounts.listIdentities(user.id),
        sessions.listActiveForUser(user.id),
        audit.query({ userId: user.id }, 1, 50),
      ]);
      const providerRef = (id: string) => ({ id, name: providers.name(id) });
      return {
        user: summary(user),
        identities: identities.map((identity) => identityView(identity, providerRef(identity.provider_id))),
        sessions: active.map((session) => sessionView(session, providerRef(session.provider_id))),
        events: await withPeople(events.events),
      };
    },
  });

  async function setStatus(request: FastifyRequest, reply: FastifyReply, userId: string, status: 'active' | 'suspended') {
    const actor = await actorOf(request);
    const before = await existingUser(userId);
    if (status === 'suspended' && before.id === actor.user.id) throw new AppError('bad_request', { params: { reason: 'you cannot suspend yourself' } });
    // Suspending takes the admins' turn: it must not leave nobody an active admin (see UserDirectory.suspend).
    if (status === 'suspended') {
      if (!(await directory.suspend(before.id))) throw new AppError('not_found');
    } else {
      await accounts.setStatus(before.id, status);
    }
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
    return noContent(reply);
  }

  app.route({ ...contractRoute(routes.admin.suspendUser), handler: (request, reply) => setStatus(request, reply, request.params.userId, 'suspended') });
  app.route({ ...contractRoute(routes.admin.reactivateUser), handler: (request, reply) => setStatus(request, reply, request.params.userId, 'active') });

  app.route({
    ...contractRoute(routes.admin.setUserAdmin),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { admin: grant } = request.body;
      const before = await existingUser(request.params.userId);
      let roles: { before: string[]; after: string[] };
      if (grant) {
        const current = parseRoles((await accounts.getUser(before.id))!.roles);
        roles = { before: current, after: [...current.filter((role) => role !== 'admin'), 'admin'] };
        await accounts.setRoles(before.id, roles.after);
      } else {
        if (before.adminFromConfig) throw new AppError('admin_from_config');
        // Checked and changed in one turn (across nodes too): two admins removing each other at once
        // leave one, never none.
        const removed = await directory.removeAdminRole(before.id);
        if (!removed) throw new AppError('not_found');
        roles = removed;
      }
      // Cached sessions carry the old roles, here and on every other worker and node.
      const sessionIds = (await sessions.listActiveForUser(before.id)).map((session) => session.id);
      changes.publish({ type: 'sessions-changed', sessionIds });
      await audit.record({
        type: grant ? 'admin_granted' : 'admin_revoked',
        actorUserId: actor.user.id,
        targetUserId: before.id,
        sessionId: actor.session.id,
        request,
        details: { before: { roles: roles.before }, after: { roles: roles.after } },
      });
      return noContent(reply);
    },
  });

  app.route({
    ...contractRoute(routes.admin.revokeSession),
    handler: async (request, reply) => {
      const actor = await actorOf(request);
      const { sessionId } = request.params;
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
      return noContent(reply);
    },
  });
}
