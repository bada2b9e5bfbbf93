import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './migrations/0001_initial.js';
import * as sessionsAudit from './migrations/0002_sessions_audit.js';
import * as apps from './migrations/0003_apps.js';
import * as accessTokens from './migrations/0004_access_tokens.js';
import * as auditApp from './migrations/0005_audit_app.js';
import * as consoleApps from './migrations/0006_console_apps.js';
import * as consoleProviders from './migrations/0007_console_providers.js';
import * as settings from './migrations/0008_settings.js';
import type { Database } from './schema.js';

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
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider, migrationTableName: 'gatehouse_migrations', migrationLockTableName: 'gatehouse_migrations_lock' });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw new Error('Database migration failed', { cause: error });
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
