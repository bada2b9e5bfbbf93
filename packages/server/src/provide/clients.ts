import { createHmac } from 'node:crypto';
import type { OidcClientDefinition } from '@gatehouse/contract';
import type { ClientMetadata } from 'oidc-provider';
import type { AppConfig } from '../config/schema.js';

/** An app that is an OIDC client, with its `oidc` block and the client id it is known by. */
export interface OidcClientApp {
  app: AppConfig;
  oidc: OidcClientDefinition;
  clientId: string;
}

/**
 * What the OpenID Provider needs of the app catalogue: the client behind a `client_id`, and whether a
 * presented secret is one of the app's live ones (only their hashes are kept: apps/).
 */
export interface OidcClientCatalogue {
  client(clientId: string): OidcClientApp | undefined;
  verifyClientSecret(appId: string, secret: string): Promise<boolean>;
}

/**
 * The catalogue as the composition root assembles it: clients from the app registry (apps/, config
 * and console apps alike), secrets checked by the client secret store against the live hashes (the
 * config file's, hashed when it was put in force, or the console's).
 */
export function catalogueOfApps(
  apps: { client(clientId: string): OidcClientApp | undefined },
  secrets: { verify(appId: string, presented: unknown): Promise<boolean> },
): OidcClientCatalogue {
  return { client: (clientId) => apps.client(clientId), verifyClientSecret: (appId, secret) => secrets.verify(appId, secret) };
}

/**
 * oidc-provider compares a presented `client_secret` with the one in the client's metadata
 * (`Client#compareClientSecret`, which it awaits). Gatehouse keeps no plaintext to put there: the
 * metadata carries a value derived from the server's key that never leaves the process and is never
 * compared, and `compareClientSecret` is replaced (provide/configuration.ts) by this check against the
 * app's live secret hashes. No secret-based algorithm (client_secret_jwt, HS256 ID tokens, symmetric
 * encryption) is offered, so that value is never used as a key either.
 */
export function secretPlaceholder(key: Buffer, clientId: string): string {
  return createHmac('sha256', key).update(`gatehouse/oidc-client-secret-placeholder/${clientId}`).digest('base64url');
}

/** The presented secret is checked against the app of the client being authenticated. */
export async function compareClientSecret(catalogue: OidcClientCatalogue, clientId: string, presented: unknown): Promise<boolean> {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
  const found = catalogue.client(clientId);
  return found ? catalogue.verifyClientSecret(found.app.id, presented) : false;
}

/**
 * The client's metadata (OpenID Connect Dynamic Client Registration's names, as oidc-provider reads
 * them) from the app's `oidc` block. Only what the block allows: its exact redirect URIs, its scopes,
 * its authentication, its algorithm. oidc-provider caches a client by a hash of this object, so a
 * change in the console applies from the next request.
 */
export function clientMetadata(found: OidcClientApp, secretKey: Buffer): ClientMetadata {
  const { oidc, app, clientId } = found;
  const publicClient = oidc.authentication === 'none';
  return {
    client_id: clientId,
    client_name: app.name,
    ...(oidc.authentication === 'client_secret_basic' || oidc.authentication === 'client_secret_post' ? { client_secret: secretPlaceholder(secretKey, clientId) } : {}),
    token_endpoint_auth_method: oidc.authentication,
    ...(oidc.jwks ? { jwks: oidc.jwks as ClientMetadata['jwks'] } : {}),
    ...(oidc.jwksUri ? { jwks_uri: oidc.jwksUri } : {}),
    redirect_uris: [...oidc.redirectUris],
    post_logout_redirect_uris: [...oidc.postLogoutRedirectUris],
    ...(oidc.backchannelLogoutUri ? { backchannel_logout_uri: oidc.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    grant_types: oidc.scopes.includes('offline_access') || !publicClient ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
    response_types: ['code'],
    scope: oidc.scopes.join(' '),
    subject_type: oidc.subject,
    id_token_signed_response_alg: oidc.idTokenAlgorithm,
    application_type: 'web',
  };
}
