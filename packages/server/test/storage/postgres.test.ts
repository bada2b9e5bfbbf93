import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
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

/** A session check's read is planned once per connection (storage/preparedStatements.ts), not at every cache miss. */
describe('the session check on PostgreSQL', () => {
  it('runs as a named prepared statement, with its own values each time', async () => {
    const handle = await openDatabase(postgresConfig(postgres.databaseUrl()));
    try {
      const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
      await handle.db.connection().execute(async (connection) => {
        const user = { id: 'u-prep', email: 'prep@corp.example', name: 'Prep', picture: null, status: 'active' as const, roles: '[]', primary_identity_id: null, created_at: 1, updated_at: 1, last_sign_in_at: null };
        await connection.insertInto('users').values(user).execute();
        await connection.insertInto('identities').values({ id: 'i-prep', user_id: 'u-prep', provider_id: 'corp', subject: 's', email: 'prep@corp.example', email_verified: 1, claims: '{}', linked_at: 1, last_used_at: null }).execute();
        const sessions = new SessionStore(connection, cipher, { idleTimeout: 60_000, absoluteLifetime: 600_000, touchInterval: 1000 });
        const one = await sessions.create({ userId: 'u-prep', identityId: 'i-prep', providerId: 'corp' });
        const two = await sessions.create({ userId: 'u-prep', identityId: 'i-prep', providerId: 'corp' });
        expect((await sessions.findWithPerson({ id: one.session.id }))?.session.id).toBe(one.session.id);
        expect((await sessions.findWithPerson({ id: two.session.id }))?.session.id).toBe(two.session.id);
        const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(connection);
        expect(prepared.rows.filter((row) => row.name.startsWith('gatehouse_') && row.statement.includes('"sessions" as "s"'))).toHaveLength(1);
      });
    } finally {
      await handle.close();
    }
  });
});
