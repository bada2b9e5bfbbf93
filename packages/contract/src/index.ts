/**
 * @gatehouse/contract — the HTTP contract between the Gatehouse server and its front end, written once.
 *
 * - `defineRoute` definitions for every JSON route (method, path, guard, params, query, body, answers);
 *   the server registers its routes from them and the front end calls them through them.
 * - `endpoints` and `pages`: the addresses that are not JSON routes.
 * - `definitions/`: the values both sides validate alike (ids, emails, policies, app definitions).
 */
import * as session from './api/session.js';
import * as me from './api/me.js';
import * as consent from './api/consent.js';
import * as operations from './api/operations.js';
import * as dashboard from './admin/dashboard.js';
import * as users from './admin/users.js';
import * as audit from './admin/audit.js';
import * as apps from './admin/apps.js';
import * as providers from './admin/providers.js';
import * as settings from './admin/settings.js';
import * as config from './admin/config.js';
import * as grants from './admin/grants.js';
import type { RouteDefinition } from './route.js';

export * from './route.js';
export * from './paths.js';
export * from './api/common.js';
export * from './api/session.js';
export * from './api/me.js';
export * from './api/consent.js';
export * from './api/operations.js';
export * from './admin/dashboard.js';
export * from './admin/users.js';
export * from './admin/audit.js';
export * from './admin/apps.js';
export * from './admin/providers.js';
export * from './admin/settings.js';
export * from './admin/config.js';
export * from './admin/grants.js';
export * from './definitions/ids.js';
export * from './definitions/email.js';
export * from './definitions/policy.js';
export * from './definitions/urls.js';
export * from './definitions/duration.js';
export * from './definitions/oidcClient.js';
export * from './definitions/app.js';
export * from './definitions/issues.js';
export * from './definitions/signInRefusal.js';
export * from './definitions/auditEventTypes.js';
export * from './definitions/providers/index.js';

/** The routes of each area, as the server registers them. */
export const routes = {
  session: { getProviders: session.getProviders, getSession: session.getSession, getCsrfToken: session.getCsrfToken, getApps: session.getApps },
  me: {
    getMySessions: me.getMySessions,
    revokeMySession: me.revokeMySession,
    revokeOtherSessions: me.revokeOtherSessions,
    getMyIdentities: me.getMyIdentities,
    unlinkMyIdentity: me.unlinkMyIdentity,
    getMyActivity: me.getMyActivity,
    revokeMyAppSignIn: me.revokeMyAppSignIn,
  },
  consent: { getConsent: consent.getConsent, allowConsent: consent.allowConsent, denyConsent: consent.denyConsent },
  operations: { getHealth: operations.getHealth, getReadiness: operations.getReadiness, getJwks: operations.getJwks },
  admin: {
    getDashboard: dashboard.getDashboard,
    listUsers: users.listUsers,
    getUser: users.getUser,
    suspendUser: users.suspendUser,
    reactivateUser: users.reactivateUser,
    setUserAdmin: users.setUserAdmin,
    revokeSession: users.revokeSession,
    listAuditEvents: audit.listAuditEvents,
    exportAuditCsv: audit.exportAuditCsv,
    listApps: apps.listApps,
    createApp: apps.createApp,
    updateApp: apps.updateApp,
    deleteApp: apps.deleteApp,
    listClientSecrets: apps.listClientSecrets,
    createClientSecret: apps.createClientSecret,
    revokeClientSecret: apps.revokeClientSecret,
    testPolicy: apps.testPolicy,
    getForwardAuthSetup: apps.getForwardAuthSetup,
    listProviders: providers.listProviders,
    listProviderPresets: providers.listProviderPresets,
    discoverProvider: providers.discoverProvider,
    createProvider: providers.createProvider,
    updateProvider: providers.updateProvider,
    enableProvider: providers.enableProvider,
    disableProvider: providers.disableProvider,
    publishProvider: providers.publishProvider,
    deleteProvider: providers.deleteProvider,
    getProviderTest: providers.getProviderTest,
    getSignInSettings: settings.getSignInSettings,
    updateSignInSettings: settings.updateSignInSettings,
    reloadConfig: config.reloadConfig,
    getConfig: config.getConfig,
    listAppGrants: grants.listAppGrants,
    revokeAppGrants: grants.revokeAppGrants,
    revokeGrant: grants.revokeGrant,
    listUserGrants: grants.listUserGrants,
  },
} as const satisfies Record<string, Record<string, RouteDefinition>>;

/** Every route of the contract, once. */
export const allRoutes: readonly RouteDefinition[] = Object.values(routes).flatMap((area) => Object.values(area));
