/**
 * Every address the front end knows, in one place: the client routes it renders, the JSON API it calls,
 * and the server-side `/.gatehouse/` endpoints it hands the browser to (full page loads, never fetch).
 */

/** Like encodeURIComponent, but leaves `/` readable (`?rd=/account`): RFC 3986 allows it in a query. */
function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%2F/gi, '/');
}

/** Query parameters whose value is undefined, null or '' are left out. */
export type QueryValues = Record<string, string | number | null | undefined>;

/** The values that are set, as search parameters. */
export function toSearchParams(values: QueryValues = {}): URLSearchParams {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  return search;
}

/** `path?a=1&b=x`, or just `path` when no value is set; values are encoded (URLSearchParams). */
export function withQuery(path: string, values: QueryValues = {}): string {
  const query = toSearchParams(values).toString();
  return query ? `${path}?${query}` : path;
}

/** Client routes rendered by the React router. `path` is for the route table, `getHref` for links. */
export const paths = {
  home: {
    path: '/',
    getHref: () => '/',
  },
  signIn: {
    path: '/sign-in',
    /** `returnTo` is where to go after signing in; omitted, the sign-in page falls back to its default. */
    getHref: (returnTo?: string) => (returnTo ? `/sign-in?rd=${encodeQueryValue(returnTo)}` : '/sign-in'),
  },
  account: {
    path: '/account',
    getHref: () => '/account',
  },
  signedOut: {
    path: '/signed-out',
    getHref: () => '/signed-out',
  },
  /** The admin console (the server answers these page loads with 403 for anyone else). */
  admin: {
    path: '/admin',
    getHref: (query?: QueryValues) => withQuery('/admin', query),
  },
  adminUsers: {
    path: '/admin/users',
    getHref: (query?: QueryValues) => withQuery('/admin/users', query),
  },
  adminUser: {
    path: '/admin/users/:userId',
    getHref: (userId: string) => `/admin/users/${encodeURIComponent(userId)}`,
  },
  adminAudit: {
    path: '/admin/audit',
    getHref: (query?: QueryValues) => withQuery('/admin/audit', query),
  },
  adminApps: {
    path: '/admin/apps',
    getHref: () => '/admin/apps',
  },
  adminAppNew: {
    path: '/admin/apps/new',
    getHref: () => '/admin/apps/new',
  },
  adminApp: {
    path: '/admin/apps/:appId',
    getHref: (appId: string) => `/admin/apps/${encodeURIComponent(appId)}`,
  },
  adminProviders: {
    path: '/admin/providers',
    getHref: () => '/admin/providers',
  },
  adminProviderNew: {
    path: '/admin/providers/new',
    getHref: () => '/admin/providers/new',
  },
  adminProvider: {
    path: '/admin/providers/:providerId',
    getHref: (providerId: string) => `/admin/providers/${encodeURIComponent(providerId)}`,
  },
  /** Where a test sign-in started from the console ends (the server redirects here). */
  adminProviderTest: {
    path: '/admin/providers/:providerId/tests/:testId',
    getHref: (providerId: string, testId: string) => `/admin/providers/${encodeURIComponent(providerId)}/tests/${encodeURIComponent(testId)}`,
  },
} as const;

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

/** Server endpoints the browser reaches by navigation or an HTML form post. */
export const serverPaths = {
  /** POST with the hidden `csrf_token` field; ends on /signed-out after the IdP's logout. */
  signOut: '/.gatehouse/sign-out',
  /**
   * POST with the hidden `csrf_token` field: starts linking another provider's identity to this account.
   * Ends on `/account?linked=<providerId>` (or on an error page).
   */
  link: (providerId: string) => `/.gatehouse/link/${encodeURIComponent(providerId)}`,
  /**
   * POST with the hidden `csrf_token` field (admins): a sign-in with the provider that creates nothing.
   * Ends on the console's result page, `/admin/providers/<id>/tests/<testId>`.
   */
  testSignIn: (providerId: string) => `/.gatehouse/test-sign-in/${encodeURIComponent(providerId)}`,
} as const;

/** Query parameters the server hands back to client routes. */
export const searchParams = {
  /** `/account?linked=<providerId>`: a provider was just linked to this account. */
  linked: 'linked',
} as const;
