import { routes, type ConfigState, type DiscoveryStatus, type ProviderAvailability, type Readiness, type ReadinessChecks } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ChangeFeed } from '../events/changes.js';
import type { DatabaseHandle } from '../storage/database.js';
import { contractRoute, typed } from '../http/contract.js';

/** What readiness reports on: the database, the change listener, and each provider's discovery and availability (providers/providerRegistry.ts). */
export interface ReadinessDeps {
  database: Pick<DatabaseHandle, 'ping'>;
  changes: Pick<ChangeFeed, 'status'>;
  providers: { statuses(): Promise<Array<{ id: string; name: string; status: DiscoveryStatus; availability: ProviderAvailability; error?: string }>> };
  /** The configuration file and its last reload (config/running.ts). */
  running: { report(): ConfigState };
}

/** What health takes: readiness's sources, and who is an admin (the only people shown its checks on the public port). */
export interface HealthDeps extends ReadinessDeps {
  /** Whether the request comes from a signed-in admin of the portal (its session cookie). */
  fromAdmin(request: FastifyRequest): Promise<boolean>;
}

/** A readiness report with every check: what an admin and the metrics listener are shown. */
export type FullReadiness = Readiness & { checks: ReadinessChecks };

/**
 * Ready when the database answers. Reported without deciding readiness: each IdP's discovery and
 * whether it answers now, checked actively within a short timeout (one IdP down must not take every
 * node out of the load balancer), whether changes made on other nodes reach this one (while they do
 * not, caches are bypassed: slower, still correct), and the configuration file with its last reload (a
 * refused one leaves the node serving with the configuration before, so it stays ready, and says why).
 */
export async function readinessReport(deps: ReadinessDeps): Promise<FullReadiness> {
  const [database, providers] = await Promise.all([deps.database.ping(), deps.providers.statuses()]);
  return {
    status: database ? 'ready' : 'unavailable',
    checks: { database: database ? 'ok' : 'unreachable', changes: deps.changes.status(), providers, config: deps.running.report() },
  };
}

/** A session that cannot be read (the database down, say) is nobody's: readiness still answers, with the status only. */
async function fromAdmin(request: FastifyRequest, deps: Pick<HealthDeps, 'fromAdmin'>): Promise<boolean> {
  try {
    return await deps.fromAdmin(request);
  } catch {
    return false;
  }
}

/**
 * /healthz: the process answers. /readyz: the database answers; anyone (a load balancer, an
 * orchestrator's probe, on any Host) gets the status and its HTTP status, nothing else. The checks name
 * the configuration file, a refused reload's problems and the IdPs' errors, which name internal hosts:
 * they are for a signed-in admin of the portal, and for the metrics listener's own `/readyz`
 * (operations/metricsListener.ts), which only operators reach.
 */
export async function healthRoutes(instance: FastifyInstance, deps: HealthDeps) {
  const app = typed(instance);

  app.route({ ...contractRoute(routes.operations.getHealth), handler: async () => ({ status: 'ok' as const }) });

  app.route({
    ...contractRoute(routes.operations.getReadiness),
    handler: async (request, reply) => {
      // The answer depends on who asks: never kept by a cache for the next caller.
      reply.header('cache-control', 'no-store');
      if (await fromAdmin(request, deps)) {
        const report = await readinessReport(deps);
        return reply.status(report.status === 'ready' ? 200 : 503).send(report);
      }
      // A stranger's probe asks the database only: no IdP is contacted on its behalf.
      const database = await deps.database.ping();
      return reply.status(database ? 200 : 503).send({ status: database ? 'ready' : 'unavailable' });
    },
  });
}
