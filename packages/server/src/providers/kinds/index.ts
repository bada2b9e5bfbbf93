/**
 * Identity providers: one interface, one runtime per kind.
 *
 * The flows (sign-in, callback, refresh, sign-out, back-channel logout) know only `ProviderConnection`
 * (types.ts). The registry (../providerRegistry.ts) prepares one per provider definition by calling
 * `connect` below, caches it, retries a failed preparation in the background with backoff, reports
 * its status (console, /readyz) and answers provider_unavailable while it cannot be prepared.
 *
 * A kind is two files:
 * - its definition in the contract (packages/contract, definitions/providers/<kind>.ts): its zod schema
 *   (`kind: '<kind>'`, the common fields, its own options, its defaults; a preset's issuer derived from
 *   its options), normalised to `ProviderConfig`, which gatehouse.yaml, the console API and its form all
 *   read; and its `ProviderKindPreset` (label, docs page, fields) for the console. Both listed in its index.ts.
 * - kinds/<kind>.ts here: its runtime, listed in `runtimes` below (a kind missing here is a
 *   compile error).
 *
 * An OpenID Connect preset (Google, Entra ID, Okta, ...) is the generic driver (oidc.ts) with its
 * quirks: `connectOidc({ authorizationParams, discover, checkIdToken, resolveClaims, profile, ... })`,
 * hooks the driver calls at fixed points — openid-client still does every protocol step. So a preset's
 * file reads as "defaults and quirks", and is tested through a loopback stand-in of its IdP.
 *
 * A kind that is not OpenID Connect (GitHub: OAuth 2.0 and a REST API) implements `ProviderConnection`
 * itself — authorizationUrl, signIn (code grant with PKCE, then the profile from its API), refresh —
 * with the library made for the protocol (openid-client's OAuth 2.0 functions work without an ID
 * token), and registers `github: connectGithub` below. Its definition (the contract's github.ts: `kind:
 * 'github'`, clientId, clientSecret, optional baseUrl for GitHub Enterprise Server, and the common
 * sign-in fields) normalises to the same `ProviderConfig`, naming as its `issuer` the namespace its
 * subjects live in (its base URL), since identities are (provider, subject).
 */
import type { ProviderConfig, ProviderKind, ProviderOf } from '../../config/schema.js';
import { connectEntra } from './entra.js';
import { connectGithub } from './github.js';
import { connectGoogle } from './google.js';
import { connectOidc } from './oidc.js';
import type { Connect, ConnectOptions, ProviderConnection } from './types.js';

export type { AuthorizationRequest, BackchannelLogoutKeys, CallbackCheck, Connect, ConnectOptions, IdpFetch, ProviderConnection, VerifiedSignIn } from './types.js';
export { connectOidc, type OidcQuirks } from './oidc.js';

const runtimes: { [K in ProviderKind]: Connect<ProviderOf<K>> } = {
  oidc: connectOidc(),
  google: connectGoogle,
  entra: connectEntra,
  // Okta, Keycloak, Auth0 and GitLab are OpenID Connect as specified: their presets are defaults only
  // (issuer, scopes, the groups claim), in their definitions (the contract's definitions/providers/).
  okta: connectOidc(),
  keycloak: connectOidc(),
  auth0: connectOidc(),
  gitlab: connectOidc(),
  github: connectGithub,
};

/** Prepares a provider with its kind's runtime (the registry's default). */
export function connect(provider: ProviderConfig, options: ConnectOptions = {}): Promise<ProviderConnection> {
  return (runtimes[provider.kind] as Connect)(provider, options);
}
