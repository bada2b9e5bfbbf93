import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConfigInput } from '../../../src/config/schema.js';
import { createDatabaseOn, dropDatabaseOn } from '../../support/postgres.js';

/**
 * Where the integration tests' Gatehouse keeps its data. The suite runs twice (vitest.config.ts): on
 * SQLite, the embedded default, and — in the `integration-postgres` project, which sets
 * GATEHOUSE_TEST_DATABASE=postgres — on PostgreSQL, where postgresSetup.ts has started one throwaway
 * server for the run and migrated a template database once. Each store is then a fresh copy of that
 * template. The variables reach processes the tests start themselves (the built server, the fuzz
 * target), so those run on the same backend.
 */
export type TestDatabase = 'sqlite' | 'postgres';

/** Set by the project; any value but these two stops the run rather than quietly testing SQLite. */
export const DATABASE_VARIABLE = 'GATEHOUSE_TEST_DATABASE';
/** Set by postgresSetup.ts: the run's server, as JSON `{ adminUrl, template }`. */
export const POSTGRES_VARIABLE = 'GATEHOUSE_TEST_POSTGRES';

export interface RunPostgres {
  adminUrl: string;
  /** The migrated database every store is copied from. */
  template: string;
}

export function testDatabase(): TestDatabase {
  const value = process.env[DATABASE_VARIABLE] ?? 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`${DATABASE_VARIABLE} must be sqlite or postgres, not ${JSON.stringify(value)}`);
  return value;
}

function runPostgres(): RunPostgres {
  const value = process.env[POSTGRES_VARIABLE];
  if (!value) throw new Error(`${DATABASE_VARIABLE}=postgres needs the run's server: run the integration-postgres project (its globalSetup starts it)`);
  return JSON.parse(value) as RunPostgres;
}

/** A data folder and, on PostgreSQL, a database: plain data, so it can be handed to another process. */
export interface TestStore {
  dataDir: string;
  /** PostgreSQL only: the store's database. */
  databaseUrl?: string;
}

/** A new, empty store (migrated) on the backend of this run. */
export async function createTestStore(): Promise<TestStore> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-test-'));
  if (testDatabase() === 'sqlite') return { dataDir };
  try {
    const { adminUrl, template } = runPostgres();
    return { dataDir, databaseUrl: await createDatabaseOn(adminUrl, template) };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Removes the store's folder and database (any connection still open to it is ended). */
export async function removeTestStore(store: TestStore): Promise<void> {
  rmSync(store.dataDir, { recursive: true, force: true });
  if (store.databaseUrl) await dropDatabaseOn(runPostgres().adminUrl, store.databaseUrl);
}

/** The configuration that puts a Gatehouse on this store. */
export function storeConfig(store: TestStore): Pick<ConfigInput, 'dataDir' | 'database'> {
  return { dataDir: store.dataDir, ...(store.databaseUrl ? { database: { url: store.databaseUrl } } : {}) };
}
