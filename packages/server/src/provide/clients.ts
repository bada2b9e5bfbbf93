import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
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

/** The client id of an app's `oidc` block: its own, or the app's id. */
export function clientIdOf(app: AppConfig): string | undefined {
  return app.oidc ? (app.oidc.clientId ?? app.id) : undefined;
}

/**
 * The catalogue over the apps in force: a client is found by its client id among the apps with an
 * `oidc` block, and a secret checked against the hashes of the secrets gatehouse.yaml gives (kept only
 * hashed in memory; console secrets are the apps store's, which answers for them where it is plugged
 * in). Hashes are compared in constant time.
 */
export function catalogueOfApps(apps: { all(): AppConfig[]; get(id: string): AppConfig | undefined }): OidcClientCatalogue {
  const hashes = new WeakMap<OidcClientDefinition, Buffer[]>();
  const hashesOf = (oidc: OidcClientDefinition) => {
    let kept = hashes.get(oidc);
    if (!kept) hashes.set(oidc, (kept = (oidc.secrets ?? []).map(sha256)));
    return kept;
  };
  return {
    client(clientId) {
      for (const app of apps.all()) if (app.oidc && clientIdOf(app) === clientId) return { app, oidc: app.oidc, clientId };
      return undefined;
    },
    async verifyClientSecret(appId, secret) {
      const oidc = apps.get(appId)?.oidc;
      if (!oidc) return false;
      const presented = sha256(secret);
      // Every live hash is compared (no early exit), so the time says nothing of which one matched.
      let matched = false;
      for (const hash of hashesOf(oidc)) matched = timingSafeEqual(hash, presented) || matched;
      return matched;
    },
  };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
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
