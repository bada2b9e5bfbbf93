import { sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from './postgres.js';

/** Gatehouse's configuration for a PostgreSQL database (a small pool, as a node's). */
export const postgresConfig = (databaseUrl: string): Config => parseConfig({ dataDir: '.', database: { url: databaseUrl, pool: { max: 4 } } }, { env: {} });

export interface PostgresForFile {
  /**
   * Each test's database: every table but the migrations' emptied (quicker than a new database each
   * time, ~250 ms; DELETE rather than TRUNCATE, several times quicker on a few rows), then opened anew.
   */
  open: (() => Promise<DatabaseHandle>) & {
    /** A second pool on the same database, as a second node would have (for the races). */
    sibling: () => Promise<DatabaseHandle>;
  };
  server(): TestPostgres;
  databaseUrl(): string;
}

/** A real PostgreSQL server started for the test file that calls this (at its top level), stopped after it. */
export function postgresForFile(): PostgresForFile {
  let server: TestPostgres | undefined;
  let url = '';
  let keeper: DatabaseHandle | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    keeper = await openDatabase(postgresConfig(url));
  }, 60_000);
  afterAll(async () => {
    await keeper?.close();
    server?.stop();
  });
  const open = Object.assign(
    async () => {
      const db = keeper!.db;
      const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'gatehouse_migrations%'`.execute(db);
      await db.transaction().execute(async (trx) => {
        for (const row of rows) await sql`delete from ${sql.table(row.name)}`.execute(trx);
      });
      return openDatabase(postgresConfig(url));
    },
    { sibling: () => openDatabase(postgresConfig(url)) },
  );
  return { open, server: () => server!, databaseUrl: () => url };
}
