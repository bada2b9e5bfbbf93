import { interactionPolicy, type ClientMetadata, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

import type { DevIdpKeys } from './loadOrCreateKeys.js';
import { providerPages } from './providerPages.js';
import type { UserDirectory } from './UserDirectory.js';

/** A relying party registered at the dev IdP. Every one is treated as first-party: no consent screen. */
export interface DevIdpClient {
  clientId: string;
  /** Shown on the login page ("Sign in to continue to …"); defaults to the client id. */
  clientName?: string;
  /** Required unless the client is public (`tokenEndpointAuthMethod: 'none'`). */
  clientSecret?: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** OIDC Back-Channel Logout 1.0; logout tokens then always carry `sid`. */
  backchannelLogoutUri?: string;
  /** `none`: a public client (no secret), which PKCE protects, as every client here must use it. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
}

export interface ProviderConfigurationInput {
  idpName: string;
  users: UserDirectory;
  clients: readonly DevIdpClient[];
  keys: DevIdpKeys;
  cookiePrefix: string;
  /** Lifetimes in seconds. */
  ttl: { accessToken: number; idToken: number; refreshToken: number };
}

const INTERACTION_TTL = 60 * 60;

function clientMetadata(client: DevIdpClient): ClientMetadata {
  return {
    client_id: client.clientId,
    ...(client.clientName === undefined ? {} : { client_name: client.clientName }),
    ...(client.tokenEndpointAuthMethod === 'none' ? {} : { client_secret: client.clientSecret }),
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
    ...(client.backchannelLogoutUri === undefined
      ? {}
      : { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: true }),
  };
}

/**
 * oidc-provider 9 refuses outgoing requests to loopback and private addresses: it passes an undici
 * `dispatcher` that drops such connections (an SSRF guard). The dev IdP's relying parties live on
 * loopback, so back-channel logout to exactly the registered `backchannel_logout_uri`s goes out without
 * that dispatcher; any other URL keeps the guard.
 */
function backchannelLogoutFetch(clients: readonly DevIdpClient[]): NonNullable<Configuration['fetch']> {
  const allowed = new Set(
    clients.flatMap((client) => (client.backchannelLogoutUri ? [new URL(client.backchannelLogoutUri).href] : [])),
  );
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (init !== undefined && allowed.has(url)) {
      const { dispatcher: _ssrfGuard, ...rest } = init as RequestInit & { dispatcher?: unknown };
      return fetch(input, rest);
    }
    return fetch(input, init);
  };
}

/**
 * oidc-provider's login and consent prompts, plus `select_account` (OIDC Core §3.1.2.1), which a
 * relying party sends to offer "use another account". There is no account chooser here: it shows the
 * login form, and without it such requests would fail with "unsupported prompt value".
 */
function promptPolicy() {
  const policy = interactionPolicy.base();
  policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 0);
  return policy;
}

/** The oidc-provider configuration of the development IdP. */
export function providerConfiguration(input: ProviderConfigurationInput): Configuration {
  const { users, cookiePrefix, ttl } = input;
  const pages = providerPages(input.idpName);
  const cookieOptions = { httpOnly: true, sameSite: 'lax', signed: true } as const;
  return {
    clients: input.clients.map(clientMetadata),
    jwks: { keys: input.keys.signingKeys },
    cookies: {
      // Cookies do not isolate by port: several dev IdPs on localhost must not read each other's state.
      names: {
        session: `${cookiePrefix}_session`,
        interaction: `${cookiePrefix}_interaction`,
        resume: `${cookiePrefix}_interaction_resume`,
      },
      long: cookieOptions,
      short: cookieOptions,
      keys: input.keys.cookieKeys,
    },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    // Scope claims go into the ID token as well as userinfo, as Google, Entra ID and Keycloak do;
    // oidc-provider's default puts them only in userinfo for the code flow (OIDC Core §5.4).
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    // What DevIdpClient can register; discovery then advertises no more than that.
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    // PKCE (RFC 7636) for every client, confidential ones included (OAuth 2.0 Security BCP, RFC 9700
    // §2.1.1); oidc-provider 9 offers only S256.
    pkce: { required: () => true },
    interactions: { policy: promptPolicy() },
    // OpenID Connect Prompt Create §4: the prompts it takes, select_account among them, so a relying
    // party that asks to let the person choose an account sends the one this IdP offers.
    discovery: { prompt_values_supported: ['none', ...promptPolicy().map((prompt) => prompt.name)] },
    async findAccount(_ctx, sub) {
      const user = users.findBySubject(sub);
      if (!user) return undefined;
      return {
        accountId: user.sub,
        // Read at every call, so groups changed with setUserGroups show in the next token or userinfo.
        // oidc-provider filters these down to what the granted scopes allow.
        claims: () => ({
          sub: user.sub,
          email: user.email,
          email_verified: user.emailVerified,
          name: user.name,
          groups: [...user.groups],
        }),
      };
    },
    /**
     * Every client here is first-party, so nobody is asked for consent: the grant of the session (or a
     * new one) is widened to whatever OIDC scopes and claims this request asks for, `offline_access`
     * included. oidc-provider documents this hook as the place to skip consent.
     */
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { oidc } = ctx;
      const accountId = oidc.session?.accountId;
      const clientId = oidc.client?.clientId;
      if (accountId === undefined || clientId === undefined) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(clientId);
      const existing = grantId === undefined ? undefined : await oidc.provider.Grant.find(grantId);
      const grant =
        existing?.accountId === accountId ? existing : new oidc.provider.Grant({ accountId, clientId });
      grant.addOIDCScope(oidc.requestParamOIDCScopes);
      if (oidc.requestParamClaims.size > 0) grant.addOIDCClaims(oidc.requestParamClaims);
      await grant.save();
      return grant;
    },
    /**
     * oidc-provider removes `offline_access` from every authorization request without prompt=consent
     * (OIDC Core §11), and by default issues refresh tokens only for `offline_access`. Gatehouse
     * refreshes to re-check claims, so a first-party client gets a refresh token whenever it may use the
     * grant. Without `offline_access` that token is bound to the IdP session (`expiresWithSession`) and
     * stops working at logout, as in Keycloak; with prompt=consent (answered without a screen, see
     * interactionRoutes.ts) `offline_access` is kept and the token outlives the session.
     */
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: ttl.accessToken,
      IdToken: ttl.idToken,
      RefreshToken: ttl.refreshToken,
      // Refresh needs the grant and, without offline_access, the session: both live as long as it.
      Grant: ttl.refreshToken,
      Session: ttl.refreshToken,
      Interaction: INTERACTION_TTL,
    },
    // Confidential server-side clients only: no browser ever calls the token or userinfo endpoint.
    clientBasedCORS: () => false,
    fetch: backchannelLogoutFetch(input.clients),
    renderError: pages.renderError,
    features: {
      // Our own login page (interactionRoutes.ts) replaces the library's debug-only one.
      devInteractions: { enabled: false },
      backchannelLogout: { enabled: true },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: pages.logoutSource,
        postLogoutSuccessSource: pages.postLogoutSuccessSource,
      },
    },
  };
}
