import { routes, type AdminGrant } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { contractRoute, noContent, typed } from '../http/contract.js';
import { iso } from '../http/isoTime.js';
import type { GrantView, OpGrant } from '../provide/opStore.js';
import { describeDevice } from '../sessions/describeDevice.js';
import type { AdminContext } from './context.js';

/**
 * The apps signed in with Gatehouse, as the console sees them: an app's live grants (who, from which
 * browser, since when), a user's, and ending them: one person's, or everyone's of an app. Every ending
 * goes through `endGrants` (so the apps are told) and is an audit event per grant, about its person.
 */
export async function grantsRoutes(
  instance: FastifyInstance,
  { admin }: { admin: Pick<AdminContext, 'grants' | 'endGrants' | 'apps' | 'audit' | 'actorOf' | 'existingUser'> },
) {
  const app = typed(instance);
  const { grants, endGrants, apps, audit, actorOf, existingUser } = admin;
  // An app deleted since keeps its id as its name.
  const appRef = (id: string) => ({ id, name: apps.get(id)?.name ?? id });

  const view = (grant: GrantView): AdminGrant => ({
    grantId: grant.grantId,
    app: appRef(grant.appId),
    user: { id: grant.userId, email: grant.user?.email ?? '', name: grant.user?.name ?? '' },
    session: { id: grant.sessionId, device: describeDevice(grant.session.userAgent), ip: grant.session.ip },
    createdAt: iso(grant.createdAt),
    lastUsedAt: iso(grant.lastUsedAt),
    expiresAt: iso(grant.expiresAt),
    scopes: grant.scopes,
  });

  /** Ends what the filter names as this admin, and records each grant ended, about its person. */
  async function end(request: FastifyRequest, filter: Parameters<typeof endGrants>[0]): Promise<OpGrant[]> {
    const actor = await actorOf(request);
    const reason = 'revoked-by-admin';
    const ended = await endGrants(filter, reason, { by: 'admin', userId: actor.user.id, sessionId: actor.session.id });
    for (const grant of ended) {
      await audit.record({
        type: 'oidc_grant_revoked',
        actorUserId: actor.user.id,
        targetUserId: grant.userId,
        sessionId: actor.session.id,
        appId: grant.appId,
        request,
        details: { by: 'admin', reason, app: appRef(grant.appId), grantId: grant.grantId, sessionId: grant.sessionId },
      });
    }
    return ended;
  }

  const existingApp = (appId: string) => {
    const found = apps.get(appId);
    if (!found) throw new AppError('not_found');
    return found;
  };

  app.route({
    ...contractRoute(routes.admin.listAppGrants),
    handler: async (request) => {
      const { id } = existingApp(request.params.appId);
      const { page, pageSize } = request.query;
      const found = await grants.liveGrantViewsOfApp(id, page, pageSize);
      return { grants: found.grants.map(view), total: found.total, page, pageSize };
    },
  });

  app.route({
    ...contractRoute(routes.admin.revokeAppGrants),
    handler: async (request) => {
      const { id } = existingApp(request.params.appId);
      return { revoked: (await end(request, { appId: id })).length };
    },
  });

  app.route({
    ...contractRoute(routes.admin.revokeGrant),
    handler: async (request, reply) => {
      // Unknown, or ended already: nothing live to end.
      if ((await end(request, { grantIds: [request.params.grantId] })).length === 0) throw new AppError('not_found');
      return noContent(reply);
    },
  });

  app.route({
    ...contractRoute(routes.admin.listUserGrants),
    handler: async (request) => {
      const user = await existingUser(request.params.userId);
      return { grants: (await grants.liveGrantViewsOfUser(user.id)).map(view) };
    },
  });
}
