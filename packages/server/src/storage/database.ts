import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Config } from '../config/schema.js';
import { ensurePrivateDir, ensurePrivateFile, tightenIfExists, type PermissionWarning } from './filePermissions.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  /** Answers whether the database can run a query now (for /readyz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export function sqlitePath(config: Config): string {
  return config.database.path ?? path.join(config.dataDir, 'gatehouse.db');
}

/**
 * Opens the configured database and brings its schema up to date. Its folder is created 0700 and its
 * files (the database, -wal and -shm) are 0600 whatever the umask (storage/filePermissions.ts); `log`
 * hears about an existing folder or file others could read.
 */
export async function openDatabase(config: Config, log?: { warn: PermissionWarning }): Promise<DatabaseHandle> {
  const file = sqlitePath(config);
  const warn: PermissionWarning = log ? (details, message) => log.warn(details, message) : (_details, message) => process.emitWarning(message);
  const onDisk = file !== ':memory:';
  if (onDisk) {
    ensurePrivateDir(path.dirname(file), warn);
    // Created 0600 before SQLite opens it: SQLite would create it with the umask's mode.
    ensurePrivateFile(file, warn);
  }
  const sqlite = new SQLite(file);
  // WAL lets readers proceed during a write; foreign keys are off by default in SQLite.
  sqlite.pragma('journal_mode = WAL');
  // SQLite gives -wal and -shm the database file's mode; ones left by an earlier run may be looser.
  if (onDisk) for (const suffix of ['-wal', '-shm']) tightenIfExists(`${file}${suffix}`, warn);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(db);
  return {
    db,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}
