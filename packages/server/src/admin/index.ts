import type { FastifyInstance } from 'fastify';
import type { AccountStore } from '../accounts/accountStore.js';
import type { SignInSettingsStore } from '../accounts/signInSettings.js';
import type { UserDirectory } from '../accounts/userDirectory.js';
import type { AuditLog } from '../audit/auditLog.js';
import type { ProviderRegistry } from '../authenticate/providerRegistry.js';
import type { ProviderStore } from '../authenticate/providerStore.js';
import type { AppRegistry } from '../authorize/appRegistry.js';
import type { AppStore } from '../authorize/appStore.js';
import type { Config } from '../config/schema.js';
import type { SessionResolver } from '../sessions/sessionResolver.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { appsRoutes } from './appsRoutes.js';
import { auditRoutes } from './auditRoutes.js';
import { adminContext } from './context.js';
import { dashboardRoutes } from './dashboardRoutes.js';
import { providersRoutes } from './providersRoutes.js';
import { providerTestRoutes } from './providerTestRoutes.js';
import { signInSettingsRoutes } from './signInSettingsRoutes.js';
import { usersRoutes } from './usersRoutes.js';

/** What the admin console's API takes: the stores it reads and changes, and the portal's origin. */
export interface AdminDeps {
  /** Admins named in the config (they cannot be removed in the console). */
  admins: Config['admins'];
  portalOrigin: string;
  accounts: AccountStore;
  directory: UserDirectory;
  sessions: SessionStore;
  /** Cached sessions carry roles: a role change drops them. */
  resolver: Pick<SessionResolver, 'invalidate'>;
  audit: AuditLog;
  apps: AppRegistry;
  appStore: AppStore;
  providers: ProviderRegistry;
  providerStore: ProviderStore;
  signInSettings: SignInSettingsStore;
}

/**
 * The admin API (`/api/admin/...`): every route is declared `admin` in the contract (the guard checks
 * the role, and CSRF on every change), and every change is an audit event with before/after.
 */
export async function adminArea(app: FastifyInstance, deps: AdminDeps) {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const admin = adminContext(deps);
  await app.register(dashboardRoutes, { admin });
  await app.register(usersRoutes, { admin });
  await app.register(appsRoutes, { admin });
  await app.register(providersRoutes, { admin });
  await app.register(providerTestRoutes, { admin });
  await app.register(signInSettingsRoutes, { admin });
  await app.register(auditRoutes, { admin });
}
