import { routes, type DiscoveryStatus } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../storage/database.js';
import { contractRoute, typed } from './contract.js';

/** What health reports on: the database, and each provider's discovery (authenticate/providerRegistry.ts). */
export interface HealthDeps {
  database: Pick<DatabaseHandle, 'ping'>;
  providers: { statuses(): Array<{ id: string; name: string; status: DiscoveryStatus; error?: string }> };
}

/**
 * /healthz: the process answers. /readyz: the database answers; each IdP's discovery status is reported
 * but does not decide readiness (one IdP down must not take every node out of the load balancer).
 */
export async function healthRoutes(instance: FastifyInstance, deps: HealthDeps) {
  const app = typed(instance);

  app.route({ ...contractRoute(routes.operations.getHealth), handler: async () => ({ status: 'ok' as const }) });

  app.route({
    ...contractRoute(routes.operations.getReadiness),
    handler: async (_request, reply) => {
      const database = await deps.database.ping();
      return reply.status(database ? 200 : 503).send({
        status: database ? 'ready' : 'unavailable',
        checks: { database: database ? 'ok' : 'unreachable', providers: deps.providers.statuses() },
      });
    },
  });
}
