import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The database schema. It is written to run unchanged on SQLite and PostgreSQL: ids are text, times are
 * epoch milliseconds in bigint columns, flags are 0/1 integers and structured values are JSON text.
 */
export interface Database {
  users: UsersTable;
  identities: IdentitiesTable;
  sessions: SessionsTable;
  sign_in_attempts: SignInAttemptsTable;
  audit_events: AuditEventsTable;
  logout_token_jtis: LogoutTokenJtisTable;
  signing_keys: SigningKeysTable;
  app_sessions: AppSessionsTable;
  app_codes: AppCodesTable;
  apps: AppsTable;
  apps_set_aside: AppsSetAsideTable;
  providers: ProvidersTable;
  settings: SettingsTable;
  op_payloads: OpPayloadsTable;
  op_grants: OpGrantsTable;
  op_logout_deliveries: OpLogoutDeliveriesTable;
  op_client_secrets: OpClientSecretsTable;
}

/** An app created in the console: its definition is the same JSON shape as an `apps:` entry. */
export interface AppsTable {
  id: string;
  definition: string;
  /**
   * The public URL's host as the proxy looks it up (`new URL(publicUrl).host`), unique: one app per
   * host, kept by the database (two creates at once cannot both take one). Null only for a row from
   * before 0011 whose definition had no readable public URL.
   */
  host: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * Console apps the 0011 migration found on a host an older console app had already (made by two
 * creates at once, before the database kept one app per host): moved here whole, never served, and
 * told to the admins in the audit log (`app_set_aside`).
 */
export interface AppsSetAsideTable {
  id: string;
  definition: string;
  host: string;
  /** The app that kept the host. */
  kept_app_id: string;
  created_at: number;
  updated_at: number;
  set_aside_at: number;
}

/**
 * An identity provider created in the console: its definition is the JSON shape of a `providers:` entry
 * without the credential, which is kept apart and encrypted (see providers/providerStore.ts).
 */
export interface ProvidersTable {
  id: string;
  definition: string;
  /** AES-GCM ciphertext of the client secret (client_secret_basic / client_secret_post). */
  client_secret_enc: string | null;
  /** AES-GCM ciphertext of the private JWK (private_key_jwt). */
  private_key_enc: string | null;
  created_at: number;
  updated_at: number;
  /** When it was published (offered to people); null while it is hidden, not tested yet. */
  published_at: number | null;
  /** How: `test` (a test sign-in passed), `admin` (published knowingly untested), `existing` (before publishing existed). */
  published_how: string | null;
}

/** Organisation-wide settings made in the console: one validated JSON value per key. */
export interface SettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

/** Signing keys, each for one purpose: the identity assertions sent to apps (published at /.gatehouse/jwks.json). */
export interface SigningKeysTable {
  kid: string;
  /** What the key signs (keys/signingKeys.ts, `KeyPurpose`): 'assertion'. */
  purpose: string;
  alg: string;
  public_jwk: string;
  /** The private JWK, AES-GCM encrypted like the IdP tokens. */
  private_jwk_enc: string;
  created_at: number;
  /** Set when a newer key took over; still published for a while so assertions in flight verify. */
  retired_at: number | null;
}

/** An app host's own session cookie: a distinct token bound to that origin, tied to a portal session. */
export interface AppSessionsTable {
  token_hash: string;
  session_id: string;
  app_id: string;
  app_origin: string;
  created_at: number;
}

/** One-time codes of the portal-to-app-host handshake (≤ 60 s, single use, bound to origin and state). */
export interface AppCodesTable {
  code_hash: string;
  session_id: string;
  app_id: string;
  app_origin: string;
  state_hash: string;
  return_to: string;
  expires_at: number;
}

export interface UsersTable {
  id: string;
  /** Lower-cased primary email, taken from the identity that created the user. */
  email: string;
  name: string;
  picture: string | null;
  status: 'active' | 'suspended';
  /** JSON array of role names (e.g. ["admin"]). */
  roles: string;
  /** The identity whose claims keep email and name current; other identities never overwrite them. */
  primary_identity_id: string | null;
  created_at: number;
  updated_at: number;
  last_sign_in_at: number | null;
}

export interface IdentitiesTable {
  id: string;
  user_id: string;
  provider_id: string;
  subject: string;
  email: string | null;
  email_verified: number;
  /** JSON: the minimal claims snapshot Gatehouse uses (name, picture, groups). */
  claims: string;
  linked_at: number;
  last_used_at: number | null;
}

export interface SessionsTable {
  /** Public handle shown by APIs; never the cookie secret. */
  id: string;
  /** SHA-256 of the cookie secret: a database leak does not yield usable cookies. */
  secret_hash: string;
  user_id: string;
  identity_id: string;
  provider_id: string;
  /** The IdP's session id (`sid`), for back-channel logout. */
  idp_sid: string | null;
  /** AES-GCM ciphertexts (see sessions/tokenCipher.ts); the session id is the associated data. */
  id_token_enc: string | null;
  refresh_token_enc: string | null;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  absolute_expires_at: number;
  ip: string | null;
  user_agent: string | null;
  revoked_at: number | null;
  revoked_reason: string | null;
  /**
   * When the claims are next due (as a last check's time: due one claimsRefreshInterval later); moved
   * by a check that is postponed too. Also the compare-and-set that lets one request check at a time.
   */
  claims_checked_at: number;
  /** When the IdP last confirmed this session's claims (its sign-in, or a re-check that succeeded); null only before migration 0010 ran. */
  claims_verified_at: number | null;
  /** The IdP access token (AES-GCM like the others), only for apps with passAccessToken. */
  access_token_enc: string | null;
  access_token_expires_at: number | null;
}

export interface SignInAttemptsTable {
  /** SHA-256 of the OAuth `state`; the raw state exists only in the browser round trip. */
  state_hash: string;
  /** SHA-256 of the secret in the browser-binding cookie (login CSRF defence). */
  binding_hash: string;
  provider_id: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
  /** `test`: an admin trying a provider from the console (nothing is created, see testSignIn.ts). */
  purpose: 'sign-in' | 'link' | 'test';
  /** For link and test attempts: the signed-in user who started it. */
  user_id: string | null;
  /** For link and test attempts: the session that started it; the callback must come back to the same one. */
  session_id: string | null;
  created_at: number;
  expires_at: number;
}

export interface AuditEventsTable {
  id: string;
  time: number;
  type: string;
  outcome: 'success' | 'failure';
  /** Who did it (a user, or null for the system / an IdP). */
  actor_user_id: string | null;
  /** Whose account it concerns. */
  target_user_id: string | null;
  session_id: string | null;
  provider_id: string | null;
  /** The app an event is about (access denials). */
  app_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** JSON object; never a token or secret. */
  details: string;
}

/** `jti`s of accepted back-channel logout tokens, kept until the token expires (replay defence). */
export interface LogoutTokenJtisTable {
  provider_id: string;
  jti: string;
  expires_at: number;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Identity = Selectable<IdentitiesTable>;
export type NewIdentity = Insertable<IdentitiesTable>;
export type SessionRow = Selectable<SessionsTable>;
export type NewSessionRow = Insertable<SessionsTable>;
export type SignInAttempt = Selectable<SignInAttemptsTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;

// Kept for tables that will use database-generated values later.
export type { Generated };

/** What oidc-provider stores (provide/adapter.ts): one row per model and id, the id kept only hashed. */
export interface OpPayloadsTable {
  model: string;
  id_hash: string;
  /** The model's JSON, without the id itself (it is the bearer secret of a code or token). */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code_hash: string | null;
  expires_at: number;
  /** Set once by a compare-and-set: the code was redeemed, the refresh token rotated. */
  consumed_at: number | null;
}

/** A grant of the OpenID Provider, with the Gatehouse session it was made in (migration 0013). */
export interface OpGrantsTable {
  grant_id: string;
  client_id: string;
  app_id: string;
  user_id: string;
  session_id: string;
  sid: string;
  subject: string;
  /** The granted scopes, space-separated. */
  scopes: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
}

/** A back-channel logout token owed to a client (the outbox; migration 0013). */
export interface OpLogoutDeliveriesTable {
  id: string;
  grant_id: string;
  client_id: string;
  app_id: string;
  user_id: string;
  session_id: string;
  sid: string;
  subject: string;
  uri: string;
  reason: string;
  created_at: number;
  attempts: Generated<number>;
  next_attempt_at: number;
  claimed_until: number | null;
  delivered_at: number | null;
  abandoned_at: number | null;
  last_error: string | null;
}

/** A console client's secret, kept hashed (migration 0013). */
export interface OpClientSecretsTable {
  id: string;
  app_id: string;
  secret_hash: string;
  hint: string;
  created_at: number;
  created_by: string | null;
  revoked_at: number | null;
}
