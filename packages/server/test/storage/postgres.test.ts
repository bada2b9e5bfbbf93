import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { storeSuite, type Opener } from './storeSuite.js';

/**
 * The storage contract on a real PostgreSQL server started for this file: a new database per test, and
 * for the races a second pool on it, as a second node would have.
 */
let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const config = (url: string) => parseConfig({ dataDir: '.', database: { url, pool: { max: 4 } } }, { env: {} });
let current = '';
const open: Opener = Object.assign(
  async () => {
    current = await server.createDatabase();
    return openDatabase(config(current));
  },
  { sibling: () => openDatabase(config(current)) },
);

storeSuite('PostgreSQL', open, { realConcurrency: true });
