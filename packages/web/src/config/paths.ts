/**
 * Every address the front end knows, in one place: the client routes it renders, the JSON API it calls,
 * and the server-side `/.gatehouse/` endpoints it hands the browser to (full page loads, never fetch).
 */

/** Like encodeURIComponent, but leaves `/` readable (`?rd=/account`): RFC 3986 allows it in a query. */
function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%2F/gi, '/');
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
} as const;

/** Query parameters the server hands back to client routes. */
export const searchParams = {
  /** `/account?linked=<providerId>`: a provider was just linked to this account. */
  linked: 'linked',
} as const;
