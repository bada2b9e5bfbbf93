import type { FastifyInstance } from 'fastify';
import { paths } from '../paths.js';
import type { DatabaseHandle } from '../storage/database.js';

/** What health reports on: the database, and each provider's discovery. */
export interface HealthDeps {
  database: Pick<DatabaseHandle, 'ping'>;
  /** Each provider's discovery status (authenticate/providerRegistry.ts). */
  providers: { statuses(): unknown };
}

/**
 * /healthz: the process answers. /readyz: the database answers; each IdP's discovery status is reported
 * but does not decide readiness (one IdP down must not take every node out of the load balancer).
 */
export async function healthRoutes(app: FastifyInstance, { services }: { services: HealthDeps }) {
  app.get(paths.healthz, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get(paths.readyz, async (_request, reply) => {
    const database = await services.database.ping();
    reply.header('cache-control', 'no-store').status(database ? 200 : 503);
    return {
      status: database ? 'ready' : 'unavailable',
      checks: {
        database: database ? 'ok' : 'unreachable',
        providers: services.providers.statuses(),
      },
    };
  });
}
