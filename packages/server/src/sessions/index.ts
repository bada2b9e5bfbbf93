import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestNotes } from '../operations/observe.js';
import type { CookieNames } from './cookies.js';
import { isValidCsrf } from './csrf.js';
import { installGuard, type GuardDeps } from './guard.js';
import { sessionEndedError } from './sessionEnded.js';
import type { CurrentSession, SessionResolver } from './sessionResolver.js';
import type { SessionStore } from './sessionStore.js';

export type { CurrentSession };

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in session for this request's portal cookie (resolved once per request), if any. */
    currentSession(): Promise<CurrentSession | undefined>;
  }
}

const perRequest = new WeakMap<FastifyRequest, Promise<CurrentSession | undefined>>();

/** What the sessions area's plugin takes: the shared resolver, the portal cookie's name, and the guard's needs. */
export interface SessionsDeps extends Pick<GuardDeps, 'isAdmin'> {
  resolver: Pick<SessionResolver, 'portal'>;
  /** Why a cookie's session ended, and the provider names that say it (sessionEnded.ts). */
  sessions: Pick<SessionStore, 'endedReason'>;
  providerName(id: string): string;
  cookies: Pick<CookieNames, 'session'>;
  /** The portal's origin and key: a change needs that exact Origin and the session-bound CSRF token. */
  portalOrigin: string;
  cookieKey: Buffer;
  /** Whose session a request was answered with, for the access log (operations/observe.ts). */
  notes: Pick<RequestNotes, 'user'>;
}

/**
 * The sessions area's door: `request.currentSession()`, the portal session cookie resolved through the
 * shared session resolver, once per request; and the one guard every route declares its access to
 * (sessions/guard.ts).
 */
export const sessionsArea = fp(
  async (app: FastifyInstance, { deps }: { deps: SessionsDeps }) => {
    const { resolver, cookies } = deps;
    app.decorateRequest('currentSession', function (this: FastifyRequest) {
      let pending = perRequest.get(this);
      if (!pending) {
        pending = resolver.portal(this.cookies[cookies.session], this).then((current) => {
          if (current) deps.notes.user(this.raw, { id: current.user.id, email: current.user.email });
          return current;
        });
        perRequest.set(this, pending);
      }
      return pending;
    });
    installGuard(app, {
      sessionOf: (request) => request.currentSession(),
      csrfValid: (request, current) => isValidCsrf(request, deps.portalOrigin, deps.cookieKey, current.session),
      isAdmin: deps.isAdmin,
      async signedOutWhy(request) {
        const ended = await deps.sessions.endedReason(request.cookies[cookies.session]);
        return ended ? sessionEndedError(ended, deps.providerName) : undefined;
      },
    });
  },
  { name: 'gatehouse-session', dependencies: ['@fastify/cookie'] },
);
