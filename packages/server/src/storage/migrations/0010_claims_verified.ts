import { sql, type Kysely } from 'kysely';

/**
 * When a session's claims were last confirmed by its IdP (its sign-in, or the last re-check that
 * succeeded), apart from `claims_checked_at`, which also moves when a check is only postponed (an IdP
 * that does not answer). A session whose claims have gone unconfirmed longer than
 * `session.maxClaimsAge` ends (authenticate/claimsRefresher.ts). Existing sessions count from their
 * last check.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('claims_verified_at', 'bigint').execute();
  await sql`update sessions set claims_verified_at = claims_checked_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('claims_verified_at').execute();
}
