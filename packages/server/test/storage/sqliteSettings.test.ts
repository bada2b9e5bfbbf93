import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { openDatabase, SQLITE_CACHE_KIB, SQLITE_MMAP_BYTES } from '../../src/storage/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-sqlite-settings-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('SQLite as Gatehouse opens it', () => {
  it('keeps a 32 MiB page cache, maps the file, and logs ahead, synced at checkpoints', async () => {
    const handle = await openDatabase(parseConfig({ dataDir }, { env: {} }));
    try {
      const pragma = async (name: string) => Object.values((await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(handle.db)).rows[0]!)[0];
      expect(await pragma('cache_size')).toBe(-SQLITE_CACHE_KIB);
      expect(await pragma('mmap_size')).toBe(SQLITE_MMAP_BYTES);
      expect(await pragma('journal_mode')).toBe('wal');
      // NORMAL (1), SQLite's advice for WAL: a commit survives the process crashing; a power cut may roll back the last ones.
      expect(await pragma('synchronous')).toBe(1);
      expect(await pragma('foreign_keys')).toBe(1);
    } finally {
      await handle.close();
    }
  });

  it('removes the planner samples ANALYZE leaves, and keeps its row counts', async () => {
    // Cost: with sqlite_stat4 samples, SQLite (built with SQLITE_ENABLE_STAT4 by better-sqlite3) plans a
    // statement again whenever a bound value changes: every session read of a cache miss, five times its CPU.
    const config = parseConfig({ dataDir, database: { path: path.join(dataDir, 'analyzed.db') } }, { env: {} });
    const first = await openDatabase(config);
    const now = Date.now();
    await first.db.insertInto('users').values(Array.from({ length: 50 }, (_, i) => ({ id: `u${i}`, email: `u${i}@example.com`, name: 'U', picture: null, status: 'active' as const, roles: '[]', primary_identity_id: null, created_at: now, updated_at: now, last_sign_in_at: now }))).execute();
    await first.close();
    const raw = new SQLite(config.database.path!);
    raw.exec('analyze');
    expect((raw.prepare('select count(*) as n from sqlite_stat4').get() as { n: number }).n).toBeGreaterThan(0);
    raw.close();
    const warnings: string[] = [];
    const reopened = await openDatabase(config, { warn: (_details: Record<string, unknown>, message: string) => warnings.push(message) });
    try {
      expect((await sql<{ n: number }>`select count(*) as n from sqlite_stat4`.execute(reopened.db)).rows[0]!.n).toBe(0);
      expect((await sql<{ n: number }>`select count(*) as n from sqlite_stat1 where tbl = 'users'`.execute(reopened.db)).rows[0]!.n).toBeGreaterThan(0);
      expect(warnings.some((message) => message.includes('query planner samples'))).toBe(true);
    } finally {
      await reopened.close();
    }
    // Once removed, a later start finds nothing to do and says nothing.
    const again: string[] = [];
    const third = await openDatabase(config, { warn: (_details: Record<string, unknown>, message: string) => again.push(message) });
    await third.close();
    expect(again).toEqual([]);
  });
});
