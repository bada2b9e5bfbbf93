/**
 * Query keys that cross feature lines. Everything about the signed-in person's own account lives
 * under `['me']`, so an action in one section can refresh another (revoking a session or unlinking an
 * identity writes a line to "Recent activity") without the features importing each other.
 */
export const meQueryKeys = {
  all: ['me'] as const,
  sessions: ['me', 'sessions'] as const,
  identities: ['me', 'identities'] as const,
  activity: ['me', 'activity'] as const,
};

/** `GET /api/session`: who is signed in (and whether they are an admin). */
export const sessionQueryKey = ['session'] as const;

/**
 * The admin console's queries, all under `['admin']`: any admin action (suspend, revoke, grant) changes
 * what several pages show (the user, the list, the dashboard's counts, the audit log), so mutations
 * invalidate the whole prefix and only the queries on screen refetch.
 */
export const adminQueryKeys = {
  all: ['admin'] as const,
  dashboard: (range: string) => ['admin', 'dashboard', range] as const,
  users: ['admin', 'users'] as const,
  userList: (params: object) => ['admin', 'users', 'list', params] as const,
  user: (userId: string) => ['admin', 'users', 'detail', userId] as const,
  audit: (params: object) => ['admin', 'audit', params] as const,
  apps: ['admin', 'apps'] as const,
  /** An app's live grants (who is signed in to it with Gatehouse), a page at a time. */
  appGrants: (appId: string, params: object) => ['admin', 'grants', 'app', appId, params] as const,
  /** The apps a user is signed in to with Gatehouse. */
  userGrants: (userId: string) => ['admin', 'grants', 'user', userId] as const,
  providers: ['admin', 'providers'] as const,
  providerPresets: ['admin', 'provider-presets'] as const,
  providerTest: (providerId: string, testId: string) => ['admin', 'providers', 'tests', providerId, testId] as const,
  signInSettings: ['admin', 'sign-in-settings'] as const,
  config: ['admin', 'config'] as const,
};
