import type { FastifyInstance } from 'fastify';
import { adminStatus } from '../accounts/admins.js';
import { sessionGroups } from '../accounts/effectiveGroups.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import { isValidCsrf } from '../sessions/csrf.js';
import { isStateChanging } from '../sessions/requireCsrf.js';
import { appsRoutes } from './appsRoutes.js';
import { auditRoutes } from './auditRoutes.js';
import { adminContext } from './context.js';
import { dashboardRoutes } from './dashboardRoutes.js';
import { providersRoutes } from './providersRoutes.js';
import { providerTestRoutes } from './providerTestRoutes.js';
import { signInSettingsRoutes } from './signInSettingsRoutes.js';
import { usersRoutes } from './usersRoutes.js';

/**
 * The admin API (`/api/admin/...`): every route checks the admin role, every change also CSRF, and
 * every change is an audit event with before/after.
 */
export async function adminRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { config } = services;
  app.addHook('onRequest', async (request) => {
    const current = await request.currentSession();
    if (!current) throw new AppError('unauthenticated');
    if (!adminStatus(config.admins, current.user, sessionGroups(services.providers, current)).admin) throw new AppError('forbidden');
    if (isStateChanging(request.method) && !isValidCsrf(request, services.portalOrigin, services.secrets.cookieKey, current.session)) {
      throw new AppError('csrf_failed');
    }
  });
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const admin = adminContext(services);
  await app.register(dashboardRoutes, { admin });
  await app.register(usersRoutes, { admin });
  await app.register(appsRoutes, { admin });
  await app.register(providersRoutes, { admin });
  await app.register(providerTestRoutes, { admin });
  await app.register(signInSettingsRoutes, { admin });
  await app.register(auditRoutes, { admin });
}
