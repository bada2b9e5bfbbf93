import type { IdentityProfile } from '../../accounts/identityProfile.js';
import type { ProviderConfig } from '../../config/schema.js';

/**
 * The seam between the sign-in flows (authorizationRequest.ts, callback.ts, claimsRefresher.ts,
 * signOut.ts, backchannelLogout.ts) and the protocol a provider speaks. The registry prepares one
 * `ProviderConnection` per provider definition (discovery for OpenID Connect, fixed endpoints for
 * GitHub), caches it, retries a failed preparation with backoff and reports its status; the flows only
 * call the connection. Every method throws an AppError from the catalogue (provider_unavailable when
 * the IdP cannot be reached, sign_in_denied when it said no, invalid_response when its answer fails
 * verification, sign_in_not_allowed when a provider rule refuses the person), never anything else.
 */
export interface ProviderConnection {
  /**
   * The URL the browser is sent to (RFC 6749 §4.1.1): the flow's own parameters plus the provider's
   * (`authorizationParams`, the preset's), by a pushed authorization request where one is offered and
   * wanted. `nonce` is for protocols that have one (OpenID Connect).
   */
  authorizationUrl(request: AuthorizationRequest): Promise<URL>;
  /**
   * The callback: the authorization response at `callbackUrl` (our redirect URI with the query the IdP
   * sent) is validated, the code redeemed with the PKCE verifier, and the person's profile read and
   * verified (ID token, userinfo, and whatever the kind adds: groups through an API, hd, tid, ...).
   */
  signIn(callbackUrl: URL, check: CallbackCheck): Promise<VerifiedSignIn>;
  /**
   * Re-reads the person's claims with the refresh token (claimsRefresher.ts); the profile must be of the
   * same subject (else invalid_response). A refusal of the grant is sign_in_denied or invalid_response.
   */
  refresh(refreshToken: string, identity: { subject: string; sid: string | undefined }): Promise<VerifiedSignIn>;
  /**
   * For kinds that give no refresh token (GitHub's OAuth apps): re-reads the claims with the access
   * token kept from sign-in, at the same times a refresh would run. A kind that has it keeps the
   * access token (encrypted, like a refresh token) whether or not an app receives it. A token the IdP
   * no longer accepts is sign_in_denied (the session ends); an IdP that asks to wait, provider_unavailable.
   */
  recheck?(accessToken: string, identity: { subject: string; sid: string | undefined }): Promise<VerifiedSignIn>;
  /** The IdP's end-session URL (RP-Initiated Logout), when it has one, carrying the given `state`. */
  logoutUrl?(request: { postLogoutRedirectUri: string; idToken: string | undefined; state: string }): URL | undefined;
  /** How to verify its logout tokens (OpenID Connect Back-Channel Logout), when it sends them. */
  backchannelLogout?: BackchannelLogoutKeys | undefined;
  /**
   * Asks the IdP, now, whether it answers (the registry's availability check): resolves when it does,
   * throws when it does not or the signal aborts. A kind without it counts as available once prepared.
   */
  probe?(signal: AbortSignal): Promise<void>;
}

export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string;
  codeChallenge: string;
  /**
   * The person asked to switch account: the IdP is asked to let them choose (`prompt`, OIDC Core
   * §3.1.2.1) rather than sign them straight back in with the session it has. Each kind says how
   * (`chooseAccountPrompt`).
   */
  chooseAccount?: boolean | undefined;
}

/** How an IdP is asked to let the person choose an account: its account chooser, or a fresh login. */
export type ChooseAccountPrompt = 'select_account' | 'login';

/**
 * The prompt a switch of account sends, given the operator's own `prompt` (authorizationParams, sent on
 * every request) and the kind's choice: an operator's `login` or `select_account` already lets the
 * person choose, and is kept; another value (`consent`, which some IdPs need for a refresh token) is
 * kept beside the kind's; `none` cannot go with any other (OIDC Core §3.1.2.1), so it gives way.
 */
export function promptForSwitch(operatorPrompt: string | undefined, kindPrompt: ChooseAccountPrompt): string {
  const asked = operatorPrompt?.split(' ').filter(Boolean) ?? [];
  if (asked.includes('login') || asked.includes('select_account')) return asked.join(' ');
  return [kindPrompt, ...asked.filter((value) => value !== 'none')].join(' ');
}

export interface CallbackCheck {
  expectedState: string;
  nonce: string;
  codeVerifier: string;
  /** How far in the future an ID token's iat may be. */
  clockSkewSeconds: number;
}

export interface VerifiedSignIn {
  profile: IdentityProfile;
  idToken: string | undefined;
  refreshToken: string | undefined;
  accessToken: { value: string; expiresIn: number | undefined };
}

export interface BackchannelLogoutKeys {
  issuer: string;
  jwksUri: string;
  /** Asymmetric algorithms only (never "none", never an HMAC keyed by the client secret). */
  algorithms: string[];
}

/** How a provider's every HTTP call to its IdP is made: Node's fetch, or one that measures (operations/metrics.ts). */
export type IdpFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface ConnectOptions {
  /** The fetch every call to this provider's IdP goes through (discovery, tokens, userinfo, its APIs). */
  fetch?: IdpFetch | undefined;
}

/** Prepares a provider of one protocol: discovery (or fixed endpoints) and client authentication. */
export type Connect<P extends ProviderConfig = ProviderConfig> = (provider: P, options?: ConnectOptions) => Promise<ProviderConnection>;
