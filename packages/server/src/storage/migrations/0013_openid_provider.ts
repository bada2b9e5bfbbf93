import type { Kysely } from 'kysely';

/**
 * Gatehouse as the OpenID Provider of its apps (provide/):
 *
 * - `op_payloads`: what oidc-provider stores (codes, tokens, its sessions, interactions, grants,
 *   pushed requests, replay markers), one row per model and id. The id of a code or token is the bearer
 *   secret, so only its SHA-256 is kept (`id_hash`), as for every model alike. `consumed_at` is set by a
 *   compare-and-set, so two nodes redeeming one code or rotating one refresh token cannot both win.
 * - `op_grants`: each grant with the Gatehouse session it was made in, the client and the person:
 *   when the session ends its grants' tokens are revoked, and each client with a back-channel logout
 *   URI is sent a logout token (`op_logout_deliveries`).
 * - `op_logout_deliveries`: the outbox of back-channel logout tokens, drained by any node and retried
 *   with backoff, so that a crash between the revocation and the delivery loses none.
 * - `op_client_secrets`: the hashes of the console clients' secrets (at most two live per client).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('op_payloads')
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('id_hash', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('user_code_hash', 'text')
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('consumed_at', 'bigint')
    .addPrimaryKeyConstraint('op_payloads_pk', ['model', 'id_hash'])
    .execute();
  await db.schema.createIndex('op_payloads_grant').on('op_payloads').column('grant_id').execute();
  await db.schema.createIndex('op_payloads_uid').on('op_payloads').columns(['model', 'uid']).execute();
  await db.schema.createIndex('op_payloads_user_code').on('op_payloads').columns(['model', 'user_code_hash']).execute();
  await db.schema.createIndex('op_payloads_expiry').on('op_payloads').column('expires_at').execute();

  await db.schema
    .createTable('op_grants')
    .addColumn('grant_id', 'text', (col) => col.primaryKey())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('session_id', 'text', (col) => col.notNull())
    /** The `sid` the client's ID tokens carry (and logout tokens name). */
    .addColumn('sid', 'text', (col) => col.notNull())
    /** The `sub` this client knows the person by (public or pairwise). */
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('scopes', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('op_grants_session').on('op_grants').column('session_id').execute();
  await db.schema.createIndex('op_grants_user').on('op_grants').column('user_id').execute();
  await db.schema.createIndex('op_grants_app').on('op_grants').columns(['app_id', 'created_at']).execute();

  await db.schema
    .createTable('op_logout_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('grant_id', 'text', (col) => col.notNull())
    .addColumn('client_id', 'text', (col) => col.notNull())
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('session_id', 'text', (col) => col.notNull())
    .addColumn('sid', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('uri', 'text', (col) => col.notNull())
    .addColumn('reason', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    /** Held by the node delivering it until then: another node takes it over after. */
    .addColumn('claimed_until', 'bigint')
    .addColumn('delivered_at', 'bigint')
    /** Set when Gatehouse stopped trying (the retries ran out): the audit log says so. */
    .addColumn('abandoned_at', 'bigint')
    .addColumn('last_error', 'text')
    .execute();
  await db.schema.createIndex('op_logout_deliveries_due').on('op_logout_deliveries').columns(['delivered_at', 'abandoned_at', 'next_attempt_at']).execute();
  await db.schema.createIndex('op_logout_deliveries_grant').on('op_logout_deliveries').column('grant_id').unique().execute();

  await db.schema
    .createTable('op_client_secrets')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'text', (col) => col.notNull())
    /** The first characters of the secret, to tell two apart in the console (never enough to guess it). */
    .addColumn('hint', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('created_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('op_client_secrets_app').on('op_client_secrets').column('app_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['op_client_secrets', 'op_logout_deliveries', 'op_grants', 'op_payloads']) await db.schema.dropTable(table).execute();
}
