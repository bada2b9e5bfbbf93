import { importJWK } from 'jose';
import * as client from 'openid-client';
import type { privateKeyJwk } from '@gatehouse/contract';
import type { z } from 'zod';
import { isLoopbackHost } from '../config/loopback.js';

/** How long one request to an IdP may take before it counts as unreachable. */
export const IDP_TIMEOUT_SECONDS = 10;

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
export async function clientAssertionKey(jwk: z.output<typeof privateKeyJwk>): Promise<client.PrivateKey | client.CryptoKey> {
  const alg = jwk.alg ?? (jwk.kty === 'RSA' ? 'RS256' : jwk.kty === 'OKP' ? 'EdDSA' : 'ES256');
  const key = await importJWK(jwk, alg);
  if (key instanceof Uint8Array || key.type !== 'private') throw new TypeError('privateKey must be an asymmetric private JWK');
  return jwk.kid ? { key, kid: jwk.kid } : key;
}
