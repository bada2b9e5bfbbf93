import { sql, type Kysely } from 'kysely';

/**
 * A provider created in the console is published (offered on the sign-in and account pages) once a
 * test sign-in with it passed, or an admin published it knowingly untested; until then it is hidden.
 * `published_at` null: hidden. `published_how`: `test`, `admin`, or `existing` for the providers created
 * before this, which were offered already and stay so.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('providers').addColumn('published_at', 'bigint').execute();
  await db.schema.alterTable('providers').addColumn('published_how', 'text').execute();
  await sql`update providers set published_at = created_at, published_how = 'existing'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('providers').dropColumn('published_how').execute();
  await db.schema.alterTable('providers').dropColumn('published_at').execute();
}
