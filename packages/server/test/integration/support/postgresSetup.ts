import { parseConfig } from '../../../src/config/load.js';
import { openDatabase } from '../../../src/storage/database.js';
import { startPostgres } from '../../support/postgres.js';
import { POSTGRES_VARIABLE, type RunPostgres } from './testStore.js';

/**
 * Global setup of the `integration-postgres` project: one throwaway PostgreSQL server for the whole
 * run, and a template database migrated once, so that every Gatehouse a test starts gets a copy of it
 * (testStore.ts) instead of running the migrations again. The server is stopped and its folder removed
 * when the run ends.
 */
export default async function setup(): Promise<() => void> {
  // Every test file keeps one or more Gatehouse pools (ten connections at most each) open at a time.
  const server = await startPostgres({ maxConnections: 300 });
  try {
    const templateUrl = await server.createDatabase();
    const template = await openDatabase(parseConfig({ database: { url: templateUrl } }, { env: {} }));
    await template.close();
    const run: RunPostgres = { adminUrl: server.adminUrl, template: decodeURIComponent(new URL(templateUrl).pathname.slice(1)) };
    // The test workers are started after this, with this process's environment, and pass it on to the
    // processes they start.
    process.env[POSTGRES_VARIABLE] = JSON.stringify(run);
  } catch (error) {
    server.stop();
    throw error;
  }
  return () => {
    delete process.env[POSTGRES_VARIABLE];
    server.stop();
  };
}
