import type { Kysely } from 'kysely';

/** Guarding apps: assertion signing keys, per-app-host session tokens, one-time handshake codes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('alg', 'text', (col) => col.notNull())
    .addColumn('public_jwk', 'text', (col) => col.notNull())
    .addColumn('private_jwk_enc', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();

  await db.schema
    .createTable('app_sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('session_id', 'text', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('app_origin', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('app_sessions_session_idx').on('app_sessions').column('session_id').execute();

  await db.schema
    .createTable('app_codes')
    .addColumn('code_hash', 'text', (col) => col.primaryKey())
    .addColumn('session_id', 'text', (col) => col.notNull())
    .addColumn('app_id', 'text', (col) => col.notNull())
    .addColumn('app_origin', 'text', (col) => col.notNull())
    .addColumn('state_hash', 'text', (col) => col.notNull())
    .addColumn('return_to', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['app_codes', 'app_sessions', 'signing_keys']) await db.schema.dropTable(table).execute();
}
