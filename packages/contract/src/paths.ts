/**
 * Every address that is not a JSON route, in one place: the server's `/.gatehouse/` endpoints the
 * browser reaches by navigation or an HTML form post, and the front end's pages the server redirects to.
 * The JSON routes carry their own paths (`defineRoute`). No schema here (no zod): the sign-in page's
 * small bundle imports this module alone, as `@gatehouse/contract/paths`.
 */
import { fillPath } from './route.js';

/** The sign-in page's `?error=` codes, with its addresses (no zod either). */
export * from './definitions/signInErrors.js';

/**
 * The id of a provider or an app: lowercase letters, digits and dashes, at most 63, starting with a
 * letter or digit. It appears in URLs (`/.gatehouse/callback/<provider>`, `/.gatehouse/auth/<app>`),
 * so it is the one pattern everywhere.
 */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The JSON API's prefix on the portal: every failure under it is problem+json. */
export const API_PREFIX = '/api';

/** Everything under this prefix is Gatehouse's own, on the portal and on every app host. */
export const RESERVED_PREFIX = '/.gatehouse';

const segment = encodeURIComponent;

/** Server endpoints (not JSON): route patterns for the server, `…Url()` for links and forms. */
export const endpoints = {
  /** GET `?rd=`: starts a sign-in (rate limited). */
  signIn: `${RESERVED_PREFIX}/sign-in/:providerId`,
  signInUrl: (providerId: string) => `${RESERVED_PREFIX}/sign-in/${segment(providerId)}`,
  /** The redirect URI registered at each IdP. */
  callback: `${RESERVED_PREFIX}/callback/:providerId`,
  callbackUrl: (providerId: string) => `${RESERVED_PREFIX}/callback/${segment(providerId)}`,
  /** POST with the hidden `csrf_token` field (`everywhere=true` for all sessions); ends on /signed-out after the IdP's logout. */
  signOut: `${RESERVED_PREFIX}/sign-out`,
  /** POST with `csrf_token`: links another provider's identity; ends on `/account?linked=<providerId>`. */
  link: `${RESERVED_PREFIX}/link/:providerId`,
  linkUrl: (providerId: string) => `${RESERVED_PREFIX}/link/${segment(providerId)}`,
  /** POST with `csrf_token` (admins): a sign-in that creates nothing; ends on the console's result page. */
  testSignIn: `${RESERVED_PREFIX}/test-sign-in/:providerId`,
  testSignInUrl: (providerId: string) => `${RESERVED_PREFIX}/test-sign-in/${segment(providerId)}`,
  /**
   * "Switch account" on the 403 page of an app host: POST with `csrf_token` and `rd` there ends the
   * session; GET `?rd=` on the portal then has the next sign-in ask the IdP to let the person choose.
   */
  switchAccount: `${RESERVED_PREFIX}/switch-account`,
  switchAccountUrl: (returnTo: string) => `${RESERVED_PREFIX}/switch-account?rd=${encodeURIComponent(returnTo)}`,
  /** OpenID Connect Back-Channel Logout 1.0: one endpoint per provider. */
  backchannelLogout: `${RESERVED_PREFIX}/backchannel-logout/:providerId`,
  backchannelLogoutUrl: (providerId: string) => `${RESERVED_PREFIX}/backchannel-logout/${segment(providerId)}`,
  /** Forward-auth for nginx auth_request (never redirects); `/<app id>` names the app. */
  forwardAuth: `${RESERVED_PREFIX}/auth`,
  /** Forward-auth for Traefik forwardAuth / Caddy forward_auth (redirects browsers to sign in). */
  forwardAuthRedirect: `${RESERVED_PREFIX}/forward-auth`,
  /** Portal side of the app-host handshake: issues the one-time code. */
  appAuthorize: `${RESERVED_PREFIX}/app-authorize`,
  /** App-host side of the handshake. */
  appStart: `${RESERVED_PREFIX}/start`,
  appComplete: `${RESERVED_PREFIX}/complete`,
  /** The OpenAPI document of the JSON API. */
  apiDocs: '/api/docs',
} as const;

/** Where the OpenID Provider's endpoints live on the portal (its issuer is the portal's origin). */
export const OIDC_PREFIX = '/oidc';

/**
 * Gatehouse as the OpenID Provider of its apps (provide/): the portal's origin is the issuer, and
 * discovery says where each endpoint is; apps that cannot read discovery are configured with these.
 */
export const oidcEndpoints = {
  discovery: '/.well-known/openid-configuration',
  authorization: `${OIDC_PREFIX}/authorize`,
  token: `${OIDC_PREFIX}/token`,
  userinfo: `${OIDC_PREFIX}/userinfo`,
  jwks: `${OIDC_PREFIX}/jwks`,
  revocation: `${OIDC_PREFIX}/revoke`,
  introspection: `${OIDC_PREFIX}/introspect`,
  pushedAuthorizationRequest: `${OIDC_PREFIX}/par`,
  endSession: `${OIDC_PREFIX}/logout`,
  /** The login step: where the authorization endpoint sends the browser, and the sign-in returns to. */
  interaction: `${OIDC_PREFIX}/interaction/:uid`,
  interactionUrl: (uid: string) => `${OIDC_PREFIX}/interaction/${segment(uid)}`,
} as const;

/** The front end's pages: `path` for the route table, `href` for links and the server's redirects. */
export const pages = {
  home: { path: '/', href: () => '/' },
  signIn: {
    path: '/sign-in',
    /** `returnTo` is where to go after signing in; omitted, the sign-in page falls back to its default. */
    href: (returnTo?: string) => (returnTo ? `/sign-in?rd=${encodeURIComponent(returnTo).replace(/%2F/gi, '/')}` : '/sign-in'),
  },
  account: { path: '/account', href: () => '/account' },
  signedOut: { path: '/signed-out', href: () => '/signed-out' },
  /** A third-party app asking for the person's consent (the OpenID Provider's login step sends them here). */
  authorize: { path: '/authorize/:uid', href: (uid: string) => fillPath('/authorize/:uid', { uid }) },
  admin: { path: '/admin', href: () => '/admin' },
  adminUsers: { path: '/admin/users', href: () => '/admin/users' },
  adminUser: { path: '/admin/users/:userId', href: (userId: string) => fillPath('/admin/users/:userId', { userId }) },
  adminAudit: { path: '/admin/audit', href: () => '/admin/audit' },
  adminApps: { path: '/admin/apps', href: () => '/admin/apps' },
  adminAppNew: { path: '/admin/apps/new', href: () => '/admin/apps/new' },
  adminApp: { path: '/admin/apps/:appId', href: (appId: string) => fillPath('/admin/apps/:appId', { appId }) },
  adminProviders: { path: '/admin/providers', href: () => '/admin/providers' },
  adminProviderNew: { path: '/admin/providers/new', href: () => '/admin/providers/new' },
  adminProvider: { path: '/admin/providers/:providerId', href: (providerId: string) => fillPath('/admin/providers/:providerId', { providerId }) },
  /** Where a test sign-in started from the console ends (the server redirects here). */
  adminProviderTest: {
    path: '/admin/providers/:providerId/tests/:testId',
    href: (providerId: string, testId: string) => fillPath('/admin/providers/:providerId/tests/:testId', { providerId, testId }),
  },
} as const;

/** Query parameters the server hands back to pages. */
export const pageParams = {
  /** `/account?linked=<providerId>`: a provider was just linked to this account. */
  linked: 'linked',
  /** `/sign-in?rd=`: where to return after signing in. */
  returnTo: 'rd',
} as const;

/** Where a person lands after sign-in when nothing (valid) was asked for. */
export const DEFAULT_RETURN_TO = pages.account.path;
