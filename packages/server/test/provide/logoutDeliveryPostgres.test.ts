import { sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { logoutDeliverySuite, type Opener } from './logoutDeliverySuite.js';

/**
 * The back-channel logout outbox on a real PostgreSQL server started for this file: each test gets the
 * database emptied, and for the races a second pool on it, as a second node would have.
 */
let server: TestPostgres;
let url: string;
let keeper: DatabaseHandle;
beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  keeper = await openDatabase(config(url));
}, 60_000);
afterAll(async () => {
  await keeper?.close();
  server?.stop();
});

const config = (databaseUrl: string) => parseConfig({ dataDir: '.', database: { url: databaseUrl, pool: { max: 4 } } }, { env: {} });

const open: Opener = Object.assign(
  async () => {
    const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'gatehouse_migrations%'`.execute(keeper.db);
    await keeper.db.transaction().execute(async (trx) => {
      for (const row of rows) await sql`delete from ${sql.table(row.name)}`.execute(trx);
    });
    return openDatabase(config(url));
  },
  { sibling: () => openDatabase(config(url)) },
);

logoutDeliverySuite('PostgreSQL', open, { realConcurrency: true });
