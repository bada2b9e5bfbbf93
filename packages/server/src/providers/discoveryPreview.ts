import { formatIssues, type DiscoveryPreview } from '@gatehouse/contract';
import * as client from 'openid-client';
import { issuerUrl } from '../config/schema.js';
import { AppError } from '../errors.js';
import { discoverIssuer } from './oidcClient.js';
import { isNetworkError, printable } from './oidcErrors.js';

/** Lists in metadata are bounded before they reach the console (a hostile document could be huge). */
const MAX_LIST = 100;

/**
 * Fetches and summarises an issuer's discovery document through openid-client, or throws a catalogue
 * error: `bad_request` for a URL Gatehouse never uses (plain http off loopback), `issuer_unreachable`,
 * `issuer_invalid` (no OpenID Connect metadata there, another issuer named, endpoints missing).
 */
export async function previewDiscovery(issuer: string, discover: (issuer: string) => Promise<client.ServerMetadata> = discoverIssuer): Promise<DiscoveryPreview> {
  const checked = issuerUrl.safeParse(issuer);
  if (!checked.success) throw new AppError('bad_request', { params: { reason: formatIssues(checked.error.issues).map((problem) => `issuer${problem.replace(/^\(root\)/, '')}`).join('; ') } });
  let metadata: client.ServerMetadata;
  try {
    metadata = await discover(issuer);
  } catch (error) {
    throw fromDiscoveryError(error, issuer);
  }
  const invalid = (reason: string) => new AppError('issuer_invalid', { params: { issuer, reason } });
  if (!metadata.authorization_endpoint) throw invalid('its discovery document has no authorization_endpoint');
  if (!metadata.token_endpoint) throw invalid('its discovery document has no token_endpoint');
  // ID token signatures are always verified, so the keys must be published.
  if (!metadata.jwks_uri) throw invalid('its discovery document has no jwks_uri');
  const methods = list(metadata.code_challenge_methods_supported);
  return {
    issuer: metadata.issuer,
    authorizationEndpoint: metadata.authorization_endpoint,
    tokenEndpoint: metadata.token_endpoint,
    userinfoEndpoint: metadata.userinfo_endpoint ?? null,
    endSessionEndpoint: metadata.end_session_endpoint ?? null,
    jwksUri: metadata.jwks_uri,
    scopesSupported: list(metadata.scopes_supported),
    claimsSupported: list(metadata.claims_supported),
    codeChallengeMethodsSupported: methods,
    pkce: methods.length === 0 ? 'not-advertised' : methods.includes('S256') ? 'S256' : 'unsupported',
    pushedAuthorizationRequests: metadata.require_pushed_authorization_requests
      ? 'required'
      : metadata.pushed_authorization_request_endpoint
        ? 'supported'
        : 'no',
    backchannelLogout: metadata.backchannel_logout_supported === true,
    idTokenSigningAlgValuesSupported: list(metadata.id_token_signing_alg_values_supported),
    tokenEndpointAuthMethodsSupported: list(metadata.token_endpoint_auth_methods_supported),
  };
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.length <= 200).slice(0, MAX_LIST) : [];
}

/** openid-client's failures in the catalogue's words; the IdP's own text is bounded and printable only. */
export function fromDiscoveryError(error: unknown, issuer: string): AppError {
  const params = { issuer };
  const code = error instanceof client.ClientError ? error.code : undefined;
  if (code === 'OAUTH_TIMEOUT') return new AppError('issuer_unreachable', { params: { ...params, reason: 'it did not answer in time' }, cause: error });
  if (isNetworkError(error)) return new AppError('issuer_unreachable', { params: { ...params, reason: 'nothing answered there' }, cause: error });
  const status = error instanceof Error && error.cause instanceof Response ? error.cause.status : undefined;
  if (status !== undefined && status >= 500) {
    return new AppError('issuer_unreachable', { params: { ...params, reason: `it answered HTTP ${status}` }, cause: error });
  }
  const invalid = (reason: string) => new AppError('issuer_invalid', { params: { ...params, reason }, cause: error });
  switch (code) {
    case 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED': {
      const named = (error as { cause?: { body?: { issuer?: unknown } } }).cause?.body?.issuer;
      const shown = typeof named === 'string' ? printable(named) : 'another issuer';
      return invalid(`its discovery document names ${shown} as the issuer; the URL must match it exactly`);
    }
    case 'OAUTH_RESPONSE_IS_NOT_CONFORM':
      return invalid(`/.well-known/openid-configuration answered ${status ? `HTTP ${status}` : 'unexpectedly'}`);
    case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
      return invalid('plain http is accepted only for loopback development IdPs');
    default:
      return invalid('/.well-known/openid-configuration is not an OpenID Connect discovery document');
  }
}
