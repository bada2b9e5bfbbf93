/** Every well-known path Gatehouse answers, in one place. */
export const RESERVED_PREFIX = '/.gatehouse';

export const paths = {
  signInStart: (providerId: string) => `${RESERVED_PREFIX}/sign-in/${encodeURIComponent(providerId)}`,
  signInStartRoute: `${RESERVED_PREFIX}/sign-in/:providerId`,
  callback: (providerId: string) => `${RESERVED_PREFIX}/callback/${encodeURIComponent(providerId)}`,
  callbackRoute: `${RESERVED_PREFIX}/callback/:providerId`,
  signOut: `${RESERVED_PREFIX}/sign-out`,
  link: (providerId: string) => `${RESERVED_PREFIX}/link/${encodeURIComponent(providerId)}`,
  linkRoute: `${RESERVED_PREFIX}/link/:providerId`,
  /** An admin tries a provider from the console (POST, CSRF): nothing is created, the result is shown. */
  testSignIn: (providerId: string) => `${RESERVED_PREFIX}/test-sign-in/${encodeURIComponent(providerId)}`,
  testSignInRoute: `${RESERVED_PREFIX}/test-sign-in/:providerId`,
  /** OpenID Connect Back-Channel Logout 1.0: one endpoint per provider. */
  backchannelLogout: (providerId: string) => `${RESERVED_PREFIX}/backchannel-logout/${encodeURIComponent(providerId)}`,
  backchannelLogoutRoute: `${RESERVED_PREFIX}/backchannel-logout/:providerId`,
  /** Forward-auth: nginx auth_request (never redirects). */
  forwardAuth: `${RESERVED_PREFIX}/auth`,
  /** Forward-auth: Traefik forwardAuth / Caddy forward_auth (redirects browsers to sign in). */
  forwardAuthRedirect: `${RESERVED_PREFIX}/forward-auth`,
  /** Portal side of the app-host handshake: issues the one-time code. */
  appAuthorize: `${RESERVED_PREFIX}/app-authorize`,
  /** App-host side of the handshake. */
  appStart: `${RESERVED_PREFIX}/start`,
  appComplete: `${RESERVED_PREFIX}/complete`,
  jwks: `${RESERVED_PREFIX}/jwks.json`,
  healthz: '/healthz',
  readyz: '/readyz',
  api: {
    prefix: '/api',
    session: '/api/session',
    csrf: '/api/csrf',
    providers: '/api/providers',
    apps: '/api/apps',
    docs: '/api/docs',
    me: {
      sessions: '/api/me/sessions',
      session: '/api/me/sessions/:sessionId',
      revokeOthers: '/api/me/sessions/revoke-others',
      identities: '/api/me/identities',
      identity: '/api/me/identities/:identityId',
      activity: '/api/me/activity',
    },
  },
  /** Pages of the React front end (served as index.html). */
  pages: {
    home: '/',
    signIn: '/sign-in',
    account: '/account',
    signedOut: '/signed-out',
    /** The console's page for one provider, and the result of a test sign-in with it. */
    adminProvider: (providerId: string) => `/admin/providers/${encodeURIComponent(providerId)}`,
    adminProviderTest: (providerId: string, testId: string) => `/admin/providers/${encodeURIComponent(providerId)}/tests/${encodeURIComponent(testId)}`,
  },
} as const;

/** Where a person lands after sign-in when nothing (valid) was asked for. */
export const DEFAULT_RETURN_TO = paths.pages.account;
