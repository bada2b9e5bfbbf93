/**
 * The JSON API paths the fetchers call. Pages, server endpoints and the query helpers are the contract's
 * (`pages`, `endpoints`, `withQuery` in @gatehouse/contract).
 */
export { withQuery } from '@gatehouse/contract';

/** The JSON API served by the Gatehouse server on the portal host. */
export const apiPaths = {
  providers: '/api/providers',
  session: '/api/session',
  csrf: '/api/csrf',
  /** GET: the apps the signed-in person may open. */
  apps: '/api/apps',
  me: {
    /** GET: the signed-in person's active sessions. */
    sessions: '/api/me/sessions',
    /** DELETE: revoke one of them (not the current one: that is "Sign out"). */
    session: (sessionId: string) => `/api/me/sessions/${encodeURIComponent(sessionId)}`,
    /** POST: revoke every session but this one. */
    revokeOtherSessions: '/api/me/sessions/revoke-others',
    /** GET: linked identities, and the providers that could still be linked. */
    identities: '/api/me/identities',
    /** DELETE: unlink one (never the last). */
    identity: (identityId: string) => `/api/me/identities/${encodeURIComponent(identityId)}`,
    /** GET: the latest events of this account, newest first. */
    activity: '/api/me/activity',
  },
  /** The admin console's API: 403 `forbidden` for anyone who is not an admin. */
  admin: {
    /** GET `?range=24h|7d`: counts per bucket, totals, live sessions, top denied apps. */
    dashboard: '/api/admin/dashboard',
    /** GET `?query=&status=&page=&pageSize=`: users, searched and paged by the server. */
    users: '/api/admin/users',
    /** GET: one user with identities, sessions and audit trail. */
    user: (userId: string) => `/api/admin/users/${encodeURIComponent(userId)}`,
    /** POST (204): suspend; every session of the user ends at once. */
    suspendUser: (userId: string) => `/api/admin/users/${encodeURIComponent(userId)}/suspend`,
    /** POST (204): reactivate a suspended user. */
    reactivateUser: (userId: string) => `/api/admin/users/${encodeURIComponent(userId)}/reactivate`,
    /** PUT `{ admin: boolean }` (204): grant or remove the admin role. */
    userAdmin: (userId: string) => `/api/admin/users/${encodeURIComponent(userId)}/admin`,
    /** DELETE (204): revoke any session. */
    session: (sessionId: string) => `/api/admin/sessions/${encodeURIComponent(sessionId)}`,
    /** GET `?type=&userId=&outcome=&from=&to=&page=&pageSize=`: the audit log, newest first. */
    audit: '/api/admin/audit',
    /** GET with the audit filters: the same events as a CSV download (a plain link, not fetch). */
    auditCsv: '/api/admin/audit.csv',
    /** GET: every protected app with its policy; POST: create one (201). */
    apps: '/api/admin/apps',
    /** PUT (full definition) or DELETE (204); 409 `app_from_config` for apps from gatehouse.yaml. */
    app: (appId: string) => `/api/admin/apps/${encodeURIComponent(appId)}`,
    /** POST `{ appId, userId }` or `{ appId, subject }`: would this person reach the app, and why. */
    policyTest: '/api/admin/policy-test',
    /** GET: every identity provider (never a credential); POST: create one (201). */
    providers: '/api/admin/providers',
    /** POST `{ issuer }`: the issuer's discovery document, summarised (or `issuer_unreachable` / `issuer_invalid`). */
    discoverProvider: '/api/admin/providers/discover',
    /** PUT (definition; a credential left out is kept) or DELETE (204); 409 `provider_from_config`, `provider_in_use`. */
    provider: (providerId: string) => `/api/admin/providers/${encodeURIComponent(providerId)}`,
    /** POST: offer the provider on the sign-in page again. */
    enableProvider: (providerId: string) => `/api/admin/providers/${encodeURIComponent(providerId)}/enable`,
    /** POST: stop offering it; whoever signed in with it is signed out at once. */
    disableProvider: (providerId: string) => `/api/admin/providers/${encodeURIComponent(providerId)}/disable`,
    /** GET: the outcome of a test sign-in (the profile and what the sign-in rules would decide). */
    providerTest: (providerId: string, testId: string) =>
      `/api/admin/providers/${encodeURIComponent(providerId)}/tests/${encodeURIComponent(testId)}`,
    /** GET / PUT `{ allowedDomains, createUsers }`: who may sign in, for every provider at once. */
    signInSettings: '/api/admin/sign-in-settings',
  },
} as const;
