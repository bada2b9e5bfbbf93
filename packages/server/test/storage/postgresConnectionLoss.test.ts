import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { isStoreUnavailable } from '../../src/errors.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

describe('PostgreSQL ending a connection Gatehouse is using', () => {
  let server: TestPostgres;
  let database: DatabaseHandle;
  let admin: pg.Client;

  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.createDatabase();
    database = await openDatabase(parseConfig({ database: { url } }, { env: {} }));
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await database?.close();
    server?.stop();
  });

  // Threat: a database restart or failover (or pg_terminate_backend) while a request holds a pooled
  // connection ends the whole Gatehouse process — on a restart, every node at once — because the
  // pool listens only to the connections it holds idle.
  it('fails the request that held it with store_unavailable, and the process and the pool go on', async () => {
    const outcome = database.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      const pid = rows[0]!.pid;
      // Between two statements of the transaction, the server ends its connection.
      await admin.query('select pg_terminate_backend($1)', [pid]);
      while ((await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sql`select 1`.execute(trx);
    });
    await expect(outcome).rejects.toSatisfy(isStoreUnavailable);
    // The broken connection was dropped from the pool: the next query gets a new one.
    expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
  });
});
