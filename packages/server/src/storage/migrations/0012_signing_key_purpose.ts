import type { Kysely } from 'kysely';

/**
 * Each signing key says what it signs (keys/signingKeys.ts, `KeyPurpose`), so keys of another purpose
 * (ID tokens, later) can live beside the assertion keys without ever signing an assertion or being
 * published in the assertion JWKS. Every key made before this signed assertions: the default says so.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('signing_keys')
    .addColumn('purpose', 'text', (col) => col.notNull().defaultTo('assertion'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signing_keys').dropColumn('purpose').execute();
}
