import type { Kysely } from 'kysely';

/**
 * Identity providers created in the admin console (providers in gatehouse.yaml stay in the file). The
 * definition is the same JSON shape as a `providers:` entry without its credential; the client secret
 * or private key is stored apart, AES-256-GCM encrypted with the provider id in the associated data.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('providers')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('definition', 'text', (col) => col.notNull())
    .addColumn('client_secret_enc', 'text')
    .addColumn('private_key_enc', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('providers').execute();
}
