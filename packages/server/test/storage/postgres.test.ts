import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { admissionModelSuite } from './admissionModel.js';
import { opStoreSuite } from './opStoreSuite.js';
import { expectSearchAlikeEverywhere, expectUsersInCodePointOrder, storeSuite, type Opener } from './storeSuite.js';

/**
 * The storage contract on a real PostgreSQL server started for this file. Each test gets the database
 * emptied (every table but the migrations'; quicker than a new database each time, ~250 ms), and for the races
 * a second pool on it, as a second node would have.
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
    // DELETE rather than TRUNCATE: on a few rows it is several times quicker (no new files).
    await keeper.db.transaction().execute(async (trx) => {
      for (const row of rows) await sql`delete from ${sql.table(row.name)}`.execute(trx);
    });
    return openDatabase(config(url));
  },
  { sibling: () => openDatabase(config(url)) },
);

storeSuite('PostgreSQL', open, { realConcurrency: true });

opStoreSuite('PostgreSQL', open, { realConcurrency: true });

admissionModelSuite('PostgreSQL', open, { runs: 100, steps: 20 });

/**
 * Many PostgreSQL servers are created with a language's locale (en_US.UTF-8, or ICU's), which sorts
 * text otherwise than SQLite and than each other: the console's user list must not depend on it.
 */
describe('on a database created with a language collation (ICU en-US)', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    const name = 'collated_en_us';
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    try {
      await admin.query(`create database ${name} template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US' locale 'C'`);
    } finally {
      await admin.end();
    }
    handle = await openDatabase(config(url.replace(/\/[^/]+$/, `/${name}`)));
  });
  afterAll(async () => {
    await handle?.close();
  });
  beforeEach(async () => {
    await handle.db.deleteFrom('users').execute();
  });

  it('lists users in the same order as on SQLite', async () => {
    await expectUsersInCodePointOrder(handle.db, () => 1_750_000_000_000);
  });

  // Where lower() is Unicode's (this database's ICU locale): the search must still match what SQLite's does.
  it('searches users as on SQLite', async () => {
    await expectSearchAlikeEverywhere(handle.db, () => 1_750_000_000_000);
  });
});
