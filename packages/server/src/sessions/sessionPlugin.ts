import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Services } from '../services.js';
import type { CurrentSession } from './sessionResolver.js';

export type { CurrentSession };

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in session for this request's portal cookie (resolved once per request), if any. */
    currentSession(): Promise<CurrentSession | undefined>;
  }
}

const perRequest = new WeakMap<FastifyRequest, Promise<CurrentSession | undefined>>();

/** Resolves the portal session cookie through the shared session resolver. */
export const sessionPlugin = fp(
  async (app: FastifyInstance, { services }: { services: Services }) => {
    const { resolver, cookies } = services;
    app.decorateRequest('currentSession', function (this: FastifyRequest) {
      let pending = perRequest.get(this);
      if (!pending) {
        pending = resolver.portal(this.cookies[cookies.session], this);
        perRequest.set(this, pending);
      }
      return pending;
    });
  },
  { name: 'gatehouse-session', dependencies: ['@fastify/cookie'] },
);
