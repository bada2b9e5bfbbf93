import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
});
