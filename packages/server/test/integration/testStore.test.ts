import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { testDatabase, type TestStore } from './support/testStore.js';

/**
 * The storage matrix itself: every integration test runs on SQLite and, in the integration-postgres
 * project, on PostgreSQL. Threat: a matrix that quietly tests SQLite twice, or tests that see each
 * other's data (or none of their own after a restart), would pass without proving anything.
 */

async function signingKeyIds(gatehouse: RunningGatehouse): Promise<string[]> {
  const answer = await fetch(`${gatehouse.url}/.gatehouse/jwks.json`);
  expect(answer.status).toBe(200);
  const { keys } = (await answer.json()) as { keys: Array<{ kid: string }> };
  return keys.map((key) => key.kid).sort();
}

/** Whether the store's data is still there: its folder, and on PostgreSQL its database. */
async function exists(store: TestStore): Promise<boolean> {
  if (!store.databaseUrl) return existsSync(store.dataDir);
  const client = new pg.Client({ connectionString: store.databaseUrl });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '3D000') return false; // invalid_catalog_name: no such database
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe(`the integration tests' store (${testDatabase()})`, () => {
  it('is on the database the project names', async () => {
    const gatehouse = await startGatehouse();
    try {
      expect(gatehouse.services.database.dialect).toBe(testDatabase());
      expect(gatehouse.services.running.current.database.driver).toBe(testDatabase());
      expect(Boolean(gatehouse.store.databaseUrl)).toBe(testDatabase() === 'postgres');
    } finally {
      await gatehouse.close();
    }
  });

  it('a restart on the same store keeps its data, a new store starts empty, and only the owner removes it', async () => {
    const first = await startGatehouse();
    let restarted: RunningGatehouse | undefined;
    let other: RunningGatehouse | undefined;
    try {
      const keys = await signingKeyIds(first);
      expect(keys.length).toBeGreaterThan(0);

      restarted = await startGatehouse({ store: first.store });
      expect(await signingKeyIds(restarted)).toEqual(keys);

      other = await startGatehouse();
      expect(other.store).not.toEqual(first.store);
      expect((await signingKeyIds(other)).filter((kid) => keys.includes(kid))).toEqual([]);

      // The restart was handed the store: closing it leaves the data to its owner.
      await restarted.close();
      restarted = undefined;
      expect(await exists(first.store)).toBe(true);
    } finally {
      await restarted?.close();
      await other?.close();
      await first.close();
    }
    expect(await exists(first.store)).toBe(false);
  });
});
