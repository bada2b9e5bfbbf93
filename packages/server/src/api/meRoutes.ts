import { routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { identityClaims } from '../accounts/accountStore.js';
import { identityView } from '../accounts/identityView.js';
import { AppError } from '../errors.js';
import { contractRoute, noContent, typed } from '../http/contract.js';
import { signedIn } from '../sessions/guard.js';
import { sessionView } from '../sessions/sessionView.js';
import type { ApiDeps } from './deps.js';
import { iso } from '../http/isoTime.js';
import { activityView } from './activityView.js';


/**
 * The account center's API (`/api/me/...`): a person's own sessions, identities and activity. Reads need
 * the session; changes also need CSRF proof (both declared in the contract, enforced by the guard).
 */
export async function meRoutes(instance: FastifyInstance, deps: Pick<ApiDeps, 'sessions' | 'accounts' | 'audit' | 'providers' | 'apps'>) {
  const app = typed(instance);
  const { sessions, accounts, audit, providers } = deps;
  const providerName = (id: string) => providers.name(id);
  const providerRef = (id: string) => ({ id, name: providerName(id) });

  /** A person ended one of their own sessions (from `currentId`). */
  const recordRevokedByUser = (request: FastifyRequest, userId: string, currentId: string, sessionId: string, reason: string) =>
    audit.record({ type: 'session_revoked', actorUserId: userId, targetUserId: userId, sessionId: currentId, request, details: { by: 'user', reason, sessionId } });

  app.route({
    ...contractRoute(routes.me.getMySessions),
    handler: async (request) => {
      const { user, session: current } = await signedIn(request);
      const list = await sessions.listActiveForUser(user.id);
      return {
        sessions: list.map((session) => {
          const isCurrent = session.id === current.id;
          // This request's own view of the current session is fresher than the row.
          const view = sessionView(session, providerRef(session.provider_id), isCurrent ? current.last_seen_at : session.last_seen_at);
          return { ...view, current: isCurrent };
        }),
      };
    },
  });

  app.route({
    ...contractRoute(routes.me.revokeMySession),
    handler: async (request, reply) => {
      const { user, session: current } = await signedIn(request);
      const { sessionId } = request.params;
      // The current session ends through sign-out (which also logs out at the IdP), not here.
      if (sessionId === current.id) throw new AppError('bad_request', { params: { reason: 'use Sign out to end this session' } });
      if (!(await sessions.revokeForUser(user.id, sessionId, 'revoked-by-user'))) throw new AppError('not_found');
      await recordRevokedByUser(request, user.id, current.id, sessionId, 'revoked-by-user');
      return noContent(reply);
    },
  });

  app.route({
    ...contractRoute(routes.me.revokeOtherSessions),
    handler: async (request) => {
      const { user, session: current } = await signedIn(request);
      const revoked = await sessions.revokeAllForUser(user.id, 'revoked-by-user', current.id);
      for (const session of revoked) await recordRevokedByUser(request, user.id, current.id, session.id, 'revoked-by-user');
      return { revoked: revoked.length };
    },
  });

  app.route({
    ...contractRoute(routes.me.getMyIdentities),
    handler: async (request) => {
      const { user, session } = await signedIn(request);
      const identities = await accounts.listIdentities(user.id);
      const linked = new Set(identities.map((identity) => identity.provider_id));
      return {
        identities: identities.map((identity) => ({
          ...identityView(identity, providerRef(identity.provider_id)),
          name: identityClaims(identity).name ?? null,
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

  app.route({
    ...contractRoute(routes.me.unlinkMyIdentity),
    handler: async (request, reply) => {
      const { user, session } = await signedIn(request);
      const { identityId } = request.params;
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
      return noContent(reply);
    },
  });

  app.route({
    ...contractRoute(routes.me.getMyActivity),
    handler: async (request) => {
      const { user } = await signedIn(request);
      const { page, pageSize } = request.query;
      const { events, total } = await audit.pageForUser(user.id, page, pageSize);
      // What the person may see of each event (api/activityView.ts), never the admins' details.
      const names = { provider: providerName, app: (id: string) => deps.apps.get(id)?.name };
      return {
        events: events.map((event) => {
          const view = activityView(event, user.id, names);
          return { ...view, time: iso(view.time) };
        }),
        total,
        page,
        pageSize,
      };
    },
  });
}
