import { endpoints, routes } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/schema.js';
import { contractRoute, typed } from '../http/contract.js';
import { appAuthorize, appComplete, appStart, type HandshakeDeps } from './appHandshake.js';
import { forwardAuthRoutes, type ForwardAuthDeps } from './forwardAuth.js';
import { jwks, type JwksDeps } from '../keys/jwks.js';

/** Everything these endpoints take; the composition root (app.ts) hands it in. */
export type ProxyEndpointsDeps = ForwardAuthDeps & HandshakeDeps & JwksDeps;

export interface ProxyEndpointsOptions {
  deps: ProxyEndpointsDeps;
  /**
   * On an app host: the protected app a request's Host belongs to. Given, this is an app host's set
   * (the handshake's start and complete); absent, the portal's (the handshake's app-authorize).
   */
  appOf?: (request: FastifyRequest) => AppConfig;
}

/**
 * The Gatehouse endpoints of guarding apps, registered on the portal and on the app-host instance:
 * forward-auth (both), the JWKS (both), and the app-host handshake's side for that host. Deciding
 * access for proxied requests is `checkAccess`, which the proxy calls itself.
 */
export async function proxyEndpoints(app: FastifyInstance, { deps, appOf }: ProxyEndpointsOptions) {
  await app.register(forwardAuthRoutes, { deps });
  typed(app).route({ ...contractRoute(routes.operations.getJwks), handler: jwks(deps) });
  if (!appOf) {
    app.get(endpoints.appAuthorize, appAuthorize(deps));
    return;
  }
  const start = appStart(deps);
  const complete = appComplete(deps);
  app.get(endpoints.appStart, (request, reply) => start(request as FastifyRequest<{ Querystring: { rd?: string } }>, reply, appOf(request)));
  app.get(endpoints.appComplete, (request, reply) => complete(request as FastifyRequest<{ Querystring: { code?: string; state?: string } }>, reply, appOf(request)));
}
