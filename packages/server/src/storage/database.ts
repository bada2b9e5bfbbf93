import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Config } from '../config/schema.js';
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

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: Config): Promise<DatabaseHandle> {
  const file = sqlitePath(config);
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(file);
  // WAL lets readers proceed during a write; foreign keys are off by default in SQLite.
  sqlite.pragma('journal_mode = WAL');
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
