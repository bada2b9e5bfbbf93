import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';
import * as initial from './migrations/0001_initial.js';
import * as sessionsAudit from './migrations/0002_sessions_audit.js';
import * as apps from './migrations/0003_apps.js';
import * as accessTokens from './migrations/0004_access_tokens.js';
import * as auditApp from './migrations/0005_audit_app.js';
import * as consoleApps from './migrations/0006_console_apps.js';
import * as consoleProviders from './migrations/0007_console_providers.js';
import * as settings from './migrations/0008_settings.js';
import * as providerPublication from './migrations/0009_provider_publication.js';
import * as claimsVerified from './migrations/0010_claims_verified.js';
import * as appHostUnique from './migrations/0011_app_host_unique.js';
import * as signingKeyPurpose from './migrations/0012_signing_key_purpose.js';
import * as openidProvider from './migrations/0013_openid_provider.js';

/** Migrations are compiled into the server (no directory scanning), in order, named by their file. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_sessions_audit': sessionsAudit,
  '0003_apps': apps,
  '0004_access_tokens': accessTokens,
  '0005_audit_app': auditApp,
  '0006_console_apps': consoleApps,
  '0007_console_providers': consoleProviders,
  '0008_settings': settings,
  '0009_provider_publication': providerPublication,
  '0010_claims_verified': claimsVerified,
  '0011_app_host_unique': appHostUnique,
  '0012_signing_key_purpose': signingKeyPurpose,
  '0013_openid_provider': openidProvider,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** The migrations this build knows, in order. */
export const KNOWN_MIGRATIONS: readonly string[] = Object.keys(migrations).sort();

const MIGRATION_TABLE = 'gatehouse_migrations';

/**
 * Held (PostgreSQL, session advisory lock) by the node that checks and migrates the schema: nodes that
 * start together take turns, so one migrates and the others then find nothing to do. Any fixed number
 * works; this one is "gatehouse" in ASCII.
 */
export const MIGRATION_LOCK_KEY = 0x67617465686f7573n;

/** The database was migrated by a newer Gatehouse: this build must not run on it. */
export class SchemaTooNewError extends Error {
  constructor(readonly unknownMigrations: readonly string[]) {
    super(
      `the database schema is newer than this Gatehouse (it has ${unknownMigrations.length === 1 ? 'migration' : 'migrations'} ` +
        `${unknownMigrations.join(', ')}, which this version does not know; the newest it knows is ${KNOWN_MIGRATIONS.at(-1)}): ` +
        'upgrade Gatehouse to the version that migrated the database, or restore a backup taken before that upgrade',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Brings the schema up to date (or, with `migrate: false`, only checks it), refusing a schema newer
 * than this build. The same migrations run on SQLite and PostgreSQL. On PostgreSQL the whole of it runs
 * on one connection holding an advisory lock, so several nodes starting at once never migrate together.
 * Returns the names of the migrations it ran.
 */
export async function migrateToLatest(db: Kysely<Database>, { migrate = true }: { migrate?: boolean } = {}): Promise<string[]> {
  if (dialectOf(db) !== 'postgres') return migrateOn(db, migrate);
  return db.connection().execute(async (connection) => {
    // Waiting for another node's migration, and a migration itself, may take longer than the
    // statement timeout meant for requests: none on this connection until it goes back to the pool.
    await sql`set statement_timeout = 0`.execute(connection);
    try {
      await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(connection);
      try {
        return await migrateOn(connection, migrate);
      } finally {
        await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(connection);
      }
    } finally {
      await sql`reset statement_timeout`.execute(connection);
    }
  });
}

async function migrateOn(db: Kysely<Database>, migrate: boolean): Promise<string[]> {
  // Kysely's migrator would call a newer schema "corrupted migrations" (an executed migration it does
  // not have) whatever allowUnorderedMigrations says: the operator is told what it means instead.
  const executed = await executedMigrations(db);
  const unknown = executed.filter((name) => !KNOWN_MIGRATIONS.includes(name));
  if (unknown.length > 0) throw new SchemaTooNewError(unknown);
  if (!migrate) return [];
  const migrator = new Migrator({ db, provider, migrationTableName: MIGRATION_TABLE, migrationLockTableName: 'gatehouse_migrations_lock' });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw new Error('Database migration failed', { cause: error });
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** The migrations the database says it has run ([] for a new database). */
export async function executedMigrations(db: Kysely<Database>): Promise<string[]> {
  const exists =
    dialectOf(db) === 'postgres'
      ? (await sql<{ found: string | null }>`select to_regclass(${MIGRATION_TABLE})::text as found`.execute(db)).rows[0]?.found
      : (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(db)).rows[0];
  if (!exists) return [];
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
  return rows.map((row) => row.name);
}
