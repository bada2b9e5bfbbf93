import { routes } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { contractRoute, typed } from '../http/contract.js';
import type { AdminContext } from './context.js';

/**
 * "Reload configuration": the config file read again and applied without a restart, as SIGHUP does
 * (reload.ts), on every worker of this node. The answer says what changed; a file that does not
 * validate, or that changes a setting only a restart applies, is `config_invalid` with each problem,
 * and nothing of it is applied. Recorded in the audit log either way (`config_reloaded`).
 */
export async function configRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'reloadConfig' | 'running' | 'actorOf'> }) {
  const app = typed(instance);
  const { reloadConfig, running } = admin;

  // Where the configuration comes from, for the console to name the source of what it shows read-only.
  app.route({
    ...contractRoute(routes.admin.getConfig),
    handler: async () => ({ config: running.report() }),
  });

  app.route({
    ...contractRoute(routes.admin.reloadConfig),
    handler: async (request) => {
      const actor = await admin.actorOf(request);
      const result = await reloadConfig({
        trigger: 'console',
        actor: { userId: actor.user.id, sessionId: actor.session.id, ip: request.ip, userAgent: request.headers['user-agent'] },
      });
      if (result.outcome === 'refused') throw new AppError('config_invalid', { params: { reason: result.problems.join('; ') } });
      return { ...result, config: running.report() };
    },
  });
}
