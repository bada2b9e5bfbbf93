import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { identityClaims, type IdentityClaims } from '../accounts/accountStore.js';
import type { Services } from '../services.js';
import type { Identity, User } from '../storage/schema.js';
import type { Session } from './sessionStore.js';

export interface CurrentSession {
  session: Session;
  user: User;
  identity: Identity;
  claims: IdentityClaims;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in session for this request's cookie (looked up once per request), if any. */
    currentSession(): Promise<CurrentSession | undefined>;
  }
}

const cache = new WeakMap<FastifyRequest, Promise<CurrentSession | undefined>>();

/**
 * Resolves the session cookie. A session counts only while it is active and its user is active: a
 * suspended user's sessions stop working at once, even before they are revoked.
 */
export const sessionPlugin = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { sessions, accounts, claims, cookies } = services;

    async function resolve(request: FastifyRequest): Promise<CurrentSession | undefined> {
      const current = await lookup(request.cookies[cookies.session]);
      if (!current) return undefined;
      // Claims are re-checked with the IdP on schedule; a refused refresh ends the session right here.
      const outcome = await claims.refreshIfDue(current.session, current.identity, request.log, request);
      if (outcome === 'ended') return undefined;
      const latest = outcome === 'refreshed' ? await lookup(request.cookies[cookies.session]) : current;
      return latest && { ...latest, session: await sessions.touch(latest.session) };
    }

    async function lookup(secret: string | undefined): Promise<CurrentSession | undefined> {
      const session = await sessions.findActive(secret);
      if (!session) return undefined;
      const [user, identity] = await Promise.all([accounts.getUser(session.user_id), accounts.getIdentity(session.identity_id)]);
      if (!user || user.status !== 'active' || !identity) return undefined;
      return { session, user, identity, claims: identityClaims(identity) };
    }

    app.decorateRequest('currentSession', function (this: FastifyRequest) {
      let pending = cache.get(this);
      if (!pending) {
        pending = resolve(this);
        cache.set(this, pending);
      }
      return pending;
    });
  },
  { name: 'gatehouse-session', dependencies: ['@fastify/cookie'] },
);
