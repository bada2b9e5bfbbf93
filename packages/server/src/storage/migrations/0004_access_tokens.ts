import type { Kysely } from 'kysely';

/** The IdP access token, kept (encrypted) only to pass it to apps configured with passAccessToken. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('access_token_enc', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('access_token_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('access_token_expires_at').execute();
  await db.schema.alterTable('sessions').dropColumn('access_token_enc').execute();
}
