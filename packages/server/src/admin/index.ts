import type { FastifyInstance } from 'fastify';
import { appsRoutes } from './appsRoutes.js';
import { auditRoutes } from './auditRoutes.js';
import { configRoutes } from './configRoutes.js';
import { adminContext, type AdminDeps } from './context.js';
import { dashboardRoutes } from './dashboardRoutes.js';
import { grantsRoutes } from './grantsRoutes.js';
import { providersRoutes } from './providersRoutes.js';
import { providerTestRoutes } from './providerTestRoutes.js';
import { signInSettingsRoutes } from './signInSettingsRoutes.js';
import { usersRoutes } from './usersRoutes.js';


/**
 * The admin API (`/api/admin/...`): every route is declared `admin` in the contract (the guard checks
 * the role, and CSRF on every change), and every change is an audit event with before/after.
 */
export async function adminArea(app: FastifyInstance, deps: AdminDeps) {

  const admin = adminContext(deps);
  await app.register(dashboardRoutes, { admin });
  await app.register(usersRoutes, { admin });
  await app.register(appsRoutes, { admin });
  await app.register(providersRoutes, { admin });
  await app.register(providerTestRoutes, { admin });
  await app.register(signInSettingsRoutes, { admin });
  await app.register(auditRoutes, { admin });
  await app.register(configRoutes, { admin });
  await app.register(grantsRoutes, { admin });
}
