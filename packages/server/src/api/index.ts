import type { FastifyInstance } from 'fastify';
import { appsRoutes } from './appsRoutes.js';
import { meRoutes } from './meRoutes.js';
import { sessionRoutes } from './sessionRoutes.js';
import type { ApiDeps } from './deps.js';

export type { ApiDeps };

/** The front end's view of the world: who is signed in, the launcher, the account center. */
export async function apiArea(app: FastifyInstance, deps: ApiDeps) {
  await app.register(sessionRoutes, deps);
  await app.register(appsRoutes, deps);
  await app.register(meRoutes, deps);
}
