import { pages } from '@gatehouse/contract';
import * as client from 'openid-client';
import { mapClaims } from '../../accounts/identityProfile.js';
import { isLoopbackHost } from '../../config/loopback.js';
import type { ProviderOf } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import { IDP_TIMEOUT_SECONDS } from '../oidcClient.js';
import { configurationError, fromOidcError, printable } from '../oidcErrors.js';
import { GitHubApiError, gitHubSite, readGitHubAccount, type GitHubAccount, type GitHubSite } from './githubApi.js';
import { promptForSwitch, type AuthorizationRequest, type CallbackCheck, type ConnectOptions, type IdpFetch, type ProviderConnection, type VerifiedSignIn } from './types.js';

type GitHubProvider = ProviderOf<'github'>;

/**
 * GitHub through an OAuth app: OAuth 2.0 (RFC 6749) with PKCE and state, no OpenID Connect — no nonce,
 * no ID token, no RFC 9207 `iss`, no discovery, no logout. openid-client does the protocol (the
 * authorization URL, the response's state, the code grant with the verifier, the refresh grant) on a
 * configuration built from GitHub's fixed endpoints; who signed in is read from the REST API
 * (githubApi.ts).
 *
 * Claims are re-checked like any provider's: GitHub Apps with expiring user tokens send a refresh
 * token, which is redeemed; classic OAuth apps send none and their tokens do not expire, so the claims
 * are re-read with the access token kept from sign-in (`recheck`). A token GitHub no longer accepts
 * (revoked by the person, by an organisation, or by GitHub) ends the session; a rate limit postpones
 * the check.
 */
export async function connectGithub(provider: GitHubProvider, options: ConnectOptions = {}): Promise<ProviderConnection> {
  return new GitHubConnection(provider, gitHubSite(provider.baseUrl, provider.apiUrl), options.fetch ?? fetch);
}

class GitHubConnection implements ProviderConnection {
  private readonly configuration: client.Configuration;

  constructor(
    private readonly provider: GitHubProvider,
    private readonly site: GitHubSite,
    private readonly fetch: IdpFetch,
  ) {
    this.configuration = new client.Configuration(
      { issuer: site.webBase, authorization_endpoint: site.authorizationEndpoint, token_endpoint: site.tokenEndpoint },
      provider.clientId,
      {},
      // GitHub documents client_id and client_secret as parameters of the token request.
      client.ClientSecretPost(provider.clientSecret!),
    );
    this.configuration.timeout = IDP_TIMEOUT_SECONDS;
    this.configuration[client.customFetch] = withOAuthErrorStatus(fetch);
    const web = new URL(site.webBase);
    // Plain http only for a loopback GitHub (a test's stand-in), as for OpenID Connect issuers.
    if (web.protocol === 'http:' && isLoopbackHost(web.hostname)) client.allowInsecureRequests(this.configuration);
  }

  /** RFC 6749 §4.1.1 with PKCE S256 (RFC 7636) and state; GitHub has no nonce (no ID token). */
  async authorizationUrl({ redirectUri, state, codeChallenge, chooseAccount }: AuthorizationRequest): Promise<URL> {
    return client.buildAuthorizationUrl(this.configuration, {
      ...this.provider.authorizationParams,
      // GitHub's account picker (its only prompt value), for a person switching account.
      ...(chooseAccount ? { prompt: promptForSwitch(this.provider.authorizationParams.prompt, this.provider.chooseAccountPrompt ?? 'select_account') } : {}),
      redirect_uri: redirectUri,
      scope: this.provider.scopes.join(' '),
      state,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  async signIn(callbackUrl: URL, check: CallbackCheck): Promise<VerifiedSignIn> {
    let tokens: client.TokenEndpointResponse;
    try {
      tokens = await client.authorizationCodeGrant(this.configuration, callbackUrl, {
        pkceCodeVerifier: check.codeVerifier,
        expectedState: check.expectedState,
        idTokenExpected: false,
      });
    } catch (error) {
      throw this.tokenError(error, `${callbackUrl.origin}${callbackUrl.pathname}`);
    }
    return this.verified(tokens, undefined);
  }

  /** GitHub Apps with expiring user tokens: the refresh grant, then the API with the new access token. */
  async refresh(refreshToken: string, identity: { subject: string }): Promise<VerifiedSignIn> {
    let tokens: client.TokenEndpointResponse;
    try {
      tokens = await client.refreshTokenGrant(this.configuration, refreshToken);
    } catch (error) {
      throw this.tokenError(error);
    }
    return this.verified(tokens, identity.subject);
  }

  /** Classic OAuth apps: no refresh token, so the claims are re-read with the access token itself. */
  async recheck(accessToken: string, identity: { subject: string }): Promise<VerifiedSignIn> {
    return this.verified({ access_token: accessToken, token_type: 'bearer' }, identity.subject);
  }

  /** The profile from the API; at a refresh, of the same person (the numeric id) or the session ends. */
  private async verified(tokens: client.TokenEndpointResponse, subject: string | undefined): Promise<VerifiedSignIn> {
    const { provider } = this;
    let account: GitHubAccount;
    try {
      account = await readGitHubAccount(this.site, tokens.access_token, { groups: provider.readsGroups, fetch: this.fetch });
    } catch (error) {
      throw this.apiError(error);
    }
    if (subject !== undefined && account.id !== subject) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('the token now belongs to another GitHub user') });
    }
    // Threat: GitHub organisation names are anyone's to register. With allowedOrganizations, only those
    // organisations (and their teams) become groups: any other organisation the person joined (one named
    // like an Entra group id, or `platform-admins`) says nothing about them here. Membership of an allowed
    // organisation is a condition of signing in and of staying signed in (oauth2-proxy's --github-org):
    // the admission judge reads it (accounts/admission.ts) at sign-in, at every re-check and whenever the
    // allowed organisations change.
    const groups = allowedGroups(account.groups ?? [], provider.allowedOrganizations);
    try {
      const mapped = mapClaims(provider, {
        sub: account.id,
        email: account.email,
        // Only the primary address, and only when GitHub says it is verified, is ever read.
        email_verified: account.email !== undefined,
        name: account.name ?? account.login,
        picture: account.avatarUrl,
        ...(account.groups ? { groups } : {}),
      });
      // The refusal names the real reason: an address exists but is not verified, not "no email".
      const facts = account.groups ? { facts: { organizations: groups.filter((group) => !group.includes('/')) } } : {};
      const profile = { ...mapped, ...facts, ...(account.primaryUnverified ? { emailUnverified: true } : {}) };
      return {
        profile,
        idToken: undefined,
        refreshToken: tokens.refresh_token,
        accessToken: { value: tokens.access_token, expiresIn: tokens.expires_in },
      };
    } catch (error) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: error });
    }
  }

  /** The token endpoint's refusals: a configuration error, a used or expired code (an expired sign-in), or GitHub's own words. */
  private tokenError(error: unknown, redirectUri?: string): AppError {
    const params = { provider: this.provider.name };
    // A wrong client secret or redirect URI is the operator's to fix, not the person's refusal.
    const misconfigured = configurationError(error, this.provider, { redirectUri });
    if (misconfigured) return misconfigured;
    if (error instanceof client.ResponseBodyError) {
      if (error.error === 'bad_verification_code') return new AppError('sign_in_expired', { cause: error, retryUrl: pages.signIn.path });
      const reason = printable(error.error_description || error.error);
      return new AppError('sign_in_denied', { params: { ...params, reason }, cause: error });
    }
    return fromOidcError(error, this.provider);
  }

  /** What each kind of API failure means for a sign-in or a session (githubApi.ts). */
  private apiError(error: unknown): AppError {
    const params = { provider: this.provider.name };
    if (!(error instanceof GitHubApiError)) return new AppError('invalid_response', { params, cause: error });
    switch (error.failure) {
      case 'revoked':
        return new AppError('sign_in_denied', { params: { ...params, reason: 'GitHub no longer accepts the access token (revoked)' }, cause: error });
      case 'rate-limited': {
        const seconds = error.retryAt ? Math.max(1, Math.ceil((error.retryAt - Date.now()) / 1000)) : undefined;
        return new AppError('provider_unavailable', { params, cause: error, headers: seconds ? { 'retry-after': String(seconds) } : {} });
      }
      case 'unavailable':
        return new AppError('provider_unavailable', { params, cause: error });
      case 'missing-scope':
        // A misconfiguration: the provider's scopes, or an organisation's restrictions, need changing.
        return new AppError('sign_in_denied', {
          params: { ...params, reason: `${error.message}; an administrator must add it to the provider's scopes` },
          cause: error,
        });
      case 'invalid':
        return new AppError('invalid_response', { params, cause: error });
    }
  }
}

/** `org` and `org/team` groups of the allowed organisations only (all of them when none is required). */
function allowedGroups(groups: readonly string[], allowedOrganizations: readonly string[]): string[] {
  if (allowedOrganizations.length === 0) return [...groups];
  return groups.filter((group) => allowedOrganizations.includes(group.split('/')[0]!));
}

/**
 * GitHub answers token request errors with HTTP 200 and an `error` member, not RFC 6749 §5.2's 400:
 * such an answer is handed to openid-client as the 400 it stands for, so it reads as the OAuth error it
 * is (ResponseBodyError), not as a token response without a token.
 */
function withOAuthErrorStatus(fetch: IdpFetch): client.CustomFetch {
  return async (url, options) => oauthErrorStatus(await fetch(url, options as RequestInit));
}

async function oauthErrorStatus(response: Response): Promise<Response> {
  if (response.status !== 200 || !response.headers.get('content-type')?.includes('json')) return response;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  if (typeof body !== 'object' || body === null || typeof (body as { error?: unknown }).error !== 'string') return response;
  return new Response(JSON.stringify(body), { status: 400, statusText: 'Bad Request', headers: response.headers });
}
