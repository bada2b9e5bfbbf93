import { routes, type ConfigState, type DiscoveryStatus, type ProviderAvailability } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import type { ChangeFeed } from '../storage/changes.js';
import type { DatabaseHandle } from '../storage/database.js';
import { contractRoute, typed } from './contract.js';

/** What health reports on: the database, the change listener, and each provider's discovery and availability (authenticate/providerRegistry.ts). */
export interface HealthDeps {
  database: Pick<DatabaseHandle, 'ping'>;
  changes: Pick<ChangeFeed, 'status'>;
  providers: { statuses(): Promise<Array<{ id: string; name: string; status: DiscoveryStatus; availability: ProviderAvailability; error?: string }>> };
  /** The configuration file and its last reload (config/running.ts). */
  config: { report(): ConfigState };
}

/**
 * /healthz: the process answers. /readyz: the database answers. Reported without deciding readiness:
 * each IdP's discovery and whether it answers now, checked actively within a short timeout (one IdP
 * down must not take every node out of the load balancer), and whether
 * changes made on other nodes reach this one (while they do not, caches are bypassed: slower, still correct),
 * and the configuration file with its last reload (a refused one leaves the node serving with the
 * configuration before, so it stays ready, and says why).
 */
export async function healthRoutes(instance: FastifyInstance, deps: HealthDeps) {
  const app = typed(instance);

  app.route({ ...contractRoute(routes.operations.getHealth), handler: async () => ({ status: 'ok' as const }) });

  app.route({
    ...contractRoute(routes.operations.getReadiness),
    handler: async (_request, reply) => {
      const [database, providers] = await Promise.all([deps.database.ping(), deps.providers.statuses()]);
      return reply.status(database ? 200 : 503).send({
        status: database ? 'ready' : 'unavailable',
        checks: { database: database ? 'ok' : 'unreachable', changes: deps.changes.status(), providers, config: deps.config.report() },
      });
    },
  });
}
