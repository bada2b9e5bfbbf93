import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { postgresConfig, postgresForFile } from '../support/postgresForFile.js';
import { admissionModelSuite } from './admissionModel.js';
import { opStoreSuite } from './opStoreSuite.js';
import { expectSearchAlikeEverywhere, expectUsersInCodePointOrder, storeSuite } from './storeSuite.js';

/**
 * The storage contract on a real PostgreSQL server started for this file. Each test gets the database
 * emptied (every table but the migrations'; quicker than a new database each time, ~250 ms), and for the races
 * a second pool on it, as a second node would have.
 */
const postgres = postgresForFile();
const { open } = postgres;

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
    const admin = new pg.Client({ connectionString: postgres.server().adminUrl });
    await admin.connect();
    try {
      await admin.query(`create database ${name} template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US' locale 'C'`);
    } finally {
      await admin.end();
    }
    handle = await openDatabase(postgresConfig(postgres.databaseUrl().replace(/\/[^/]+$/, `/${name}`)));
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
