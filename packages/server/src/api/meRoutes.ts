import { routes, type MyAppSignIn } from '@gatehouse/contract';
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
export async function meRoutes(instance: FastifyInstance, deps: Pick<ApiDeps, 'sessions' | 'accounts' | 'audit' | 'providers' | 'apps' | 'grants' | 'endGrants'>) {
  const app = typed(instance);
  const { sessions, accounts, audit, providers } = deps;
  const providerName = (id: string) => providers.name(id);
  const providerRef = (id: string) => ({ id, name: providerName(id) });
  // An app deleted since keeps its id as its name: its sign-ins are still the person's to end.
  const appRef = (id: string) => ({ id, name: deps.apps.get(id)?.name ?? id });

  /** The apps signed in with Gatehouse in each of these sessions (the person's own grants only). */
  async function appsBySession(userId: string, sessionIds: string[]): Promise<Map<string, MyAppSignIn[]>> {
    const bySession = new Map<string, MyAppSignIn[]>();
    for (const grant of await deps.grants.liveGrantsOfSessions(sessionIds)) {
      // A grant is made in the session of the person it is for; checked again all the same.
      if (grant.userId !== userId) continue;
      const apps = bySession.get(grant.sessionId) ?? [];
      apps.push({ grantId: grant.grantId, app: appRef(grant.appId), signedInAt: iso(grant.createdAt), lastUsedAt: iso(grant.lastUsedAt), scopes: grant.scopes });
      bySession.set(grant.sessionId, apps);
    }
    for (const apps of bySession.values()) apps.sort((a, b) => a.app.name.localeCompare(b.app.name) || a.signedInAt.localeCompare(b.signedInAt));
    return bySession;
  }

  /** A person ended one of their own sessions (from `currentId`). */
  const recordRevokedByUser = (request: FastifyRequest, userId: string, currentId: string, sessionId: string, reason: string) =>
    audit.record({ type: 'session_revoked', actorUserId: userId, targetUserId: userId, sessionId: currentId, request, details: { by: 'user', reason, sessionId } });

  app.route({
    ...contractRoute(routes.me.getMySessions),
    handler: async (request) => {
      const { user, session: current } = await signedIn(request);
      const list = await sessions.listActiveForUser(user.id);
      const apps = await appsBySession(user.id, list.map((session) => session.id));
      return {
        sessions: list.map((session) => {
          const isCurrent = session.id === current.id;
          // This request's own view of the current session is fresher than the row.
          const view = sessionView(session, providerRef(session.provider_id), isCurrent ? current.last_seen_at : session.last_seen_at);
          return { ...view, current: isCurrent, apps: apps.get(session.id) ?? [] };
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
    ...contractRoute(routes.me.revokeMyAppSignIn),
    handler: async (request, reply) => {
      const { user, session: current } = await signedIn(request);
      const grant = await deps.grants.grant(request.params.grantId);
      // Threat: IDOR. A grant id is not a secret (it may be seen in a log, or guessed): someone else's
      // grant answers exactly as one that does not exist, and is left alone.
      if (!grant || grant.userId !== user.id) throw new AppError('not_found');
      const reason = 'revoked-by-user';
      const [ended] = await deps.endGrants({ grantIds: [grant.grantId] }, reason, { by: 'user', userId: user.id, sessionId: current.id });
      // Ended already (here, or by its session ending meanwhile): nothing of it is live to end.
      if (!ended) throw new AppError('not_found');
      await audit.record({
        type: 'oidc_grant_revoked',
        actorUserId: user.id,
        targetUserId: user.id,
        sessionId: current.id,
        appId: ended.appId,
        request,
        details: { by: 'user', reason, app: appRef(ended.appId), grantId: ended.grantId, sessionId: ended.sessionId },
      });
      return noContent(reply);
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
