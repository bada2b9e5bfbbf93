import { importJWK } from 'jose';
import * as client from 'openid-client';
import type { ProviderConfig } from '../config/schema.js';
import { isLoopbackHost } from '../config/loopback.js';
import type { IdpFetch } from '../http/metrics.js';

/** How long one request to an IdP may take before it counts as unreachable. */
export const IDP_TIMEOUT_SECONDS = 10;

/** Clock tolerance for ID token exp/nbf (openid-client's default is 30 s). */
const CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Builds the openid-client configuration for one provider from its discovery document. Every protocol
 * step (discovery, PKCE, PAR, code grant, ID token and userinfo checks, end-session URL) is done by
 * openid-client; this file only chooses its options.
 */
export async function discoverProvider(provider: ProviderConfig, fetch?: IdpFetch): Promise<client.Configuration> {
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
      // Every call to the IdP, discovery included, through the measured fetch (http/metrics.ts).
      ...(fetch ? { [client.customFetch]: fetch } : {}),
    },
  );
  if (fetch) configuration[client.customFetch] = fetch;
  // Verify ID token signatures also when they come straight from the token endpoint over TLS
  // (OIDC Core §3.1.3.7 allows skipping it; we do not: defence in depth against a compromised channel).
  client.enableNonRepudiationChecks(configuration);
  return configuration;
}

/**
 * An issuer's discovery document alone, for the console's preview before a provider exists: the same
 * openid-client discovery (issuer must match exactly, http only for loopback), without a client.
 */
export async function discoverIssuer(issuer: string): Promise<client.ServerMetadata> {
  const url = new URL(issuer);
  const insecureLoopback = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  const configuration = await client.discovery(url, 'metadata-preview', undefined, client.None(), {
    timeout: IDP_TIMEOUT_SECONDS,
    execute: insecureLoopback ? [client.allowInsecureRequests] : [],
  });
  return configuration.serverMetadata();
}

/** The key private_key_jwt signs client assertions with; throws when the JWK is not a usable private key. */
export async function clientAssertionKey(jwk: NonNullable<ProviderConfig['privateKey']>): Promise<client.PrivateKey | client.CryptoKey> {
  const alg = jwk.alg ?? (jwk.kty === 'RSA' ? 'RS256' : jwk.kty === 'OKP' ? 'EdDSA' : 'ES256');
  const key = await importJWK(jwk, alg);
  if (key instanceof Uint8Array || key.type !== 'private') throw new TypeError('privateKey must be an asymmetric private JWK');
  return jwk.kid ? { key, kid: jwk.kid } : key;
}

async function clientAuthentication(provider: ProviderConfig): Promise<client.ClientAuth> {
  switch (provider.clientAuthMethod) {
    case 'client_secret_basic':
      return client.ClientSecretBasic(provider.clientSecret);
    case 'client_secret_post':
      return client.ClientSecretPost(provider.clientSecret);
    case 'private_key_jwt':
      return client.PrivateKeyJwt(await clientAssertionKey(provider.privateKey!));
  }
}
