import * as client from 'openid-client';
import { mapClaims, type AdmissionFacts, type IdentityProfile } from '../../accounts/identityProfile.js';
import { isLoopbackHost } from '../../config/loopback.js';
import type { ProviderConfig, ProviderOf } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import { clientAssertionKey, IDP_TIMEOUT_SECONDS } from '../oidcClient.js';
import { configurationError, fromOidcError } from '../oidcErrors.js';
import { promptForSwitch, type AuthorizationRequest, type CallbackCheck, type ChooseAccountPrompt, type ConnectOptions, type ProviderConnection, type VerifiedSignIn } from './types.js';

/** Clock tolerance for ID token exp/nbf (openid-client's default is 30 s). */
const CLOCK_TOLERANCE_SECONDS = 60;

/** The kinds that speak OpenID Connect: the generic provider and its presets. */
export type OidcProvider = Extract<ProviderConfig, { issuer: string; scopes: string[] }>;

/** The verified claims a quirk sees: the ID token's, then userinfo's and what earlier hooks resolved. */
export type Claims = Record<string, unknown>;

/**
 * A preset's quirks, as hooks the OpenID Connect driver calls at fixed points of the flow. The protocol
 * itself (discovery, PKCE, PAR, code grant, ID token and userinfo checks, refresh, end-session URL)
 * stays openid-client's; a hook only adds a check or a claim, and fails closed by throwing an AppError.
 */
export interface OidcQuirks<P extends OidcProvider = OidcProvider> {
  /** Parameters added to every authorization request (e.g. Google's `hd`); the operator's `authorizationParams` win. */
  authorizationParams?(provider: P): Record<string, string>;
  /**
   * How the IdP is asked to let the person choose an account when they switch (Google's and Entra's
   * account choosers: `select_account`). Without it: `select_account` when discovery lists it in
   * `prompt_values_supported` (OpenID Connect Prompt Create §4), else `login`, which every OpenID
   * Provider supports (an IdP that cannot show a chooser must refuse `select_account`, §3.1.2.6).
   */
  chooseAccountPrompt?: ChooseAccountPrompt;
  /**
   * Discovery, when the preset's issuer needs more than openid-client's exact match (Entra's
   * multi-tenant `{tenantid}` template). Gets the generic discovery and its options.
   */
  discover?(provider: P, discover: (options?: DiscoveryOptions) => Promise<client.Configuration>): Promise<client.Configuration>;
  /**
   * Checks of a verified ID token's claims (signature, iss, aud, exp and nonce are checked already),
   * at sign-in and at every refresh: that Entra's carries a `tid`. Throws invalid_response to refuse an
   * answer that is not what the IdP sends; whether the person is admitted is not decided here.
   */
  checkIdToken?(provider: P, claims: client.IDToken): void;
  /**
   * What the kind's admission rules read (Google's `hd`, Entra's `tid`), from this answer: `idToken`
   * is the verified ID token when one came (a refresh may come without), `claims` everything merged.
   * The rules themselves are accounts/admission.ts's, one judge for sign-in, refresh and every change
   * of the rules. A fact this answer does not carry is left out.
   */
  facts?(provider: P, idToken: client.IDToken | undefined, claims: Claims): AdmissionFacts;
  /**
   * Claims the IdP gives only through an API called with the access token (Entra's group overage
   * through Microsoft Graph): merged over the ID token's and userinfo's before mapping.
   */
  resolveClaims?(provider: P, claims: Claims, accessToken: string): Promise<Claims>;
  /** Adjusts the mapped profile (e.g. what counts as a verified email where the IdP sends no email_verified). */
  profile?(provider: P, profile: IdentityProfile, claims: Claims): IdentityProfile;
  /** The issuer a refreshed ID token must name (default: the discovered one). */
  expectedIssuer?(provider: P, claims: client.IDToken, discoveredIssuer: string): string;
  /** Whether its logout tokens are accepted (default: when discovery publishes a JWKS). */
  backchannelLogout?: boolean;
}

export interface DiscoveryOptions {
  /** Fetch used by openid-client for every request to the IdP (a test stand-in's routing, a proxy). */
  fetch?: client.CustomFetch;
}

/**
 * The OpenID Connect driver: every OIDC kind (the generic one and each preset) is this, with the
 * preset's quirks. Every protocol step is openid-client's; this file only chooses its options.
 */
export function connectOidc<P extends OidcProvider>(quirks: OidcQuirks<P> = {}) {
  return async (provider: P, connectOptions: ConnectOptions = {}): Promise<ProviderConnection> => {
    // A quirk's own fetch (a test stand-in's routing) wins over the measured one.
    const discover = (options?: DiscoveryOptions) => discoverProvider(provider, { fetch: options?.fetch ?? connectOptions.fetch });
    const configuration = quirks.discover ? await quirks.discover(provider, discover) : await discover();
    return new OidcConnection(provider, configuration, quirks);
  };
}

/** The openid-client configuration for one provider, from its discovery document. */
export async function discoverProvider(provider: OidcProvider, options: DiscoveryOptions = {}): Promise<client.Configuration> {
  const issuer = new URL(provider.issuer);
  const insecureLoopback = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
  const configuration = await client.discovery(
    issuer,
    provider.clientId,
    { [client.clockTolerance]: CLOCK_TOLERANCE_SECONDS },
    await clientAuthentication(provider),
    {
      timeout: IDP_TIMEOUT_SECONDS,
      // Plain http is refused by openid-client; allowed only for loopback issuers (development IdP).
      execute: insecureLoopback ? [client.allowInsecureRequests] : [],
      ...(options.fetch ? { [client.customFetch]: options.fetch } : {}),
    },
  );
  if (options.fetch) configuration[client.customFetch] = options.fetch;
  // Verify ID token signatures also when they come straight from the token endpoint over TLS
  // (OIDC Core §3.1.3.7 allows skipping it; we do not: defence in depth against a compromised channel).
  client.enableNonRepudiationChecks(configuration);
  return configuration;
}

class OidcConnection<P extends OidcProvider> implements ProviderConnection {
  readonly backchannelLogout;

  constructor(
    private readonly provider: P,
    private readonly configuration: client.Configuration,
    private readonly quirks: OidcQuirks<P>,
  ) {
    const metadata = configuration.serverMetadata();
    this.backchannelLogout =
      metadata.jwks_uri && quirks.backchannelLogout !== false
        ? {
            issuer: metadata.issuer,
            jwksUri: metadata.jwks_uri,
            algorithms: (metadata.id_token_signing_alg_values_supported ?? ['RS256']).filter((alg) => alg !== 'none' && !alg.startsWith('HS')),
          }
        : undefined;
  }

  /**
   * A fresh fetch of the IdP's JWKS (else of its discovery document), through the fetch its every other
   * call uses: what it answered at discovery says nothing about whether it answers now.
   */
  async probe(signal: AbortSignal): Promise<void> {
    const metadata = this.configuration.serverMetadata();
    const url = metadata.jwks_uri ?? new URL('.well-known/openid-configuration', metadata.issuer.endsWith('/') ? metadata.issuer : `${metadata.issuer}/`).href;
    const fetchImpl = this.configuration[client.customFetch] ?? fetch;
    const response = await fetchImpl(url, { method: 'GET', body: undefined, headers: { accept: 'application/json' }, signal, redirect: 'manual' });
    // Read to the end (or the signal's abort): an IdP that sends headers and then stalls is not answering.
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${new URL(url).pathname} answered HTTP ${response.status}`);
  }

  /**
   * OIDC Core §3.1; RFC 9700: state, nonce and PKCE S256 — through a pushed authorization request
   * (RFC 9126) where the IdP offers one.
   */
  async authorizationUrl({ redirectUri, state, nonce, codeChallenge, chooseAccount }: AuthorizationRequest): Promise<URL> {
    const { provider, configuration } = this;
    const parameters: Record<string, string> = {
      ...this.quirks.authorizationParams?.(provider),
      ...provider.authorizationParams,
      ...(chooseAccount ? { prompt: promptForSwitch(provider.authorizationParams.prompt, this.chooseAccountPrompt()) } : {}),
      redirect_uri: redirectUri,
      scope: provider.scopes.join(' '),
      state,
      nonce,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    };
    const usePar =
      provider.pushedAuthorizationRequests === 'always' ||
      (provider.pushedAuthorizationRequests === 'auto' && Boolean(configuration.serverMetadata().pushed_authorization_request_endpoint));
    try {
      return usePar ? await client.buildAuthorizationUrlWithPAR(configuration, parameters) : client.buildAuthorizationUrl(configuration, parameters);
    } catch (error) {
      // The IdP's PAR endpoint may answer that Gatehouse's registration is wrong (a client secret, a
      // redirect URI): that is a configuration error with its fix, not an outage.
      throw configurationError(error, provider, { redirectUri }) ?? new AppError('provider_unavailable', { params: { provider: provider.name }, cause: error });
    }
  }

  /**
   * openid-client validates the authorization response (state, RFC 9207 iss), redeems the code with the
   * PKCE verifier, checks the ID token (signature, iss, aud, exp, nonce) and userinfo `sub`.
   */
  async signIn(callbackUrl: URL, check: CallbackCheck): Promise<VerifiedSignIn> {
    const { provider, configuration } = this;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: check.codeVerifier,
        expectedState: check.expectedState,
        expectedNonce: check.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw fromOidcError(error, provider, { redirectUri: `${callbackUrl.origin}${callbackUrl.pathname}` });
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new AppError('invalid_response', { params: { provider: provider.name } });
    // openid-client checks exp, nbf and "too far in the past", not an iat in the future: we do.
    if (typeof idClaims.iat !== 'number' || idClaims.iat > Date.now() / 1000 + check.clockSkewSeconds) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('ID token issued in the future') });
    }
    checkAuthorizedParty(provider, idClaims);
    this.quirks.checkIdToken?.(provider, idClaims);
    return this.verified(tokens, idClaims, idClaims.sub, idClaims);
  }

  async refresh(refreshToken: string, identity: { subject: string; sid: string | undefined }): Promise<VerifiedSignIn> {
    const { provider, configuration } = this;
    const tokens = await client.refreshTokenGrant(configuration, refreshToken).catch((error: unknown) => {
      throw fromOidcError(error, provider);
    });
    const idClaims = tokens.claims();
    // openid-client checks a refreshed ID token's signature, iss and aud; that it is about the same
    // person is ours to check (OIDC Core §12.2).
    if (idClaims) {
      const issuer = this.quirks.expectedIssuer?.(provider, idClaims, configuration.serverMetadata().issuer) ?? configuration.serverMetadata().issuer;
      if (idClaims.sub !== identity.subject || idClaims.iss !== issuer) {
        throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('refreshed ID token for another subject or issuer') });
      }
      checkAuthorizedParty(provider, idClaims);
      this.quirks.checkIdToken?.(provider, idClaims);
    }
    return this.verified(tokens, { ...(idClaims ?? {}), sub: identity.subject, sid: idClaims?.sid ?? identity.sid }, identity.subject, idClaims);
  }

  /** The operator's choice, else the kind's account chooser, else what discovery says the IdP offers (see OidcQuirks.chooseAccountPrompt). */
  private chooseAccountPrompt(): ChooseAccountPrompt {
    if (this.provider.chooseAccountPrompt) return this.provider.chooseAccountPrompt;
    if (this.quirks.chooseAccountPrompt) return this.quirks.chooseAccountPrompt;
    const offered = this.configuration.serverMetadata().prompt_values_supported;
    return Array.isArray(offered) && offered.includes('select_account') ? 'select_account' : 'login';
  }

  logoutUrl({ postLogoutRedirectUri, idToken, state }: { postLogoutRedirectUri: string; idToken: string | undefined; state: string }): URL | undefined {
    if (!this.configuration.serverMetadata().end_session_endpoint) return undefined;
    const parameters: Record<string, string> = { post_logout_redirect_uri: postLogoutRedirectUri, state };
    if (idToken) parameters.id_token_hint = idToken;
    return client.buildEndSessionUrl(this.configuration, parameters);
  }

  /** Userinfo, the claims the quirks resolve with the access token, and the mapped profile. */
  private async verified(tokens: client.TokenEndpointResponse, idClaims: Claims, subject: string, idToken: client.IDToken | undefined): Promise<VerifiedSignIn> {
    const { provider, configuration, quirks } = this;
    let userinfo: Claims = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      userinfo = await client.fetchUserInfo(configuration, tokens.access_token, subject).catch((error: unknown) => {
        throw fromOidcError(error, provider);
      });
    }
    const resolved = quirks.resolveClaims ? await quirks.resolveClaims(provider, { ...idClaims, ...userinfo }, tokens.access_token) : {};
    try {
      const merged = { ...idClaims, ...userinfo, ...resolved };
      const facts = quirks.facts?.(provider, idToken, merged);
      const mapped = { ...mapClaims(provider, idClaims, { ...userinfo, ...resolved }), ...(facts ? { facts } : {}) };
      return {
        profile: quirks.profile ? quirks.profile(provider, mapped, merged) : mapped,
        idToken: tokens.id_token,
        refreshToken: tokens.refresh_token,
        accessToken: { value: tokens.access_token, expiresIn: tokens.expires_in },
      };
    } catch (error) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: error });
    }
  }
}

/**
 * OIDC Core §3.1.3.7 (6): an ID token whose `azp` names another client was issued to that client, even
 * when its `aud` also lists this one; it is refused. (openid-client checks `azp` only when `aud` has
 * several values.) Threat: a token obtained by another client of the same IdP replayed here.
 */
function checkAuthorizedParty(provider: OidcProvider, claims: client.IDToken): void {
  if (claims.azp !== undefined && claims.azp !== provider.clientId) {
    throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('the ID token was issued to another client (azp)') });
  }
}

async function clientAuthentication(provider: OidcProvider): Promise<client.ClientAuth> {
  switch (provider.clientAuthMethod) {
    case 'client_secret_basic':
      return client.ClientSecretBasic(provider.clientSecret);
    case 'client_secret_post':
      return client.ClientSecretPost(provider.clientSecret);
    case 'private_key_jwt':
      return client.PrivateKeyJwt(await clientAssertionKey(provider.privateKey!));
  }
}

/** A kind-specific provider, for a quirk's signature. */
export type OidcProviderOf<K extends OidcProvider['kind']> = ProviderOf<K>;
