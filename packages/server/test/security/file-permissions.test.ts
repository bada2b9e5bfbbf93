import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { loadSecrets } from '../../src/secrets.js';
import { openDatabase } from '../../src/storage/database.js';

// Threat: another local user reads Gatehouse's data — the database (session hashes, encrypted IdP
// tokens, signing keys) or the development keys that decrypt them — because the files were created
// with the umask's mode (SQLite creates 0644 less the umask, world-readable under the usual 022) or
// left with a loose mode by an earlier run. Every case runs under the most permissive umask, 000.

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('data folder and file modes', () => {
  let root: string;
  let umask: number;
  const warnings: string[] = [];
  const log = { warn: (_details: Record<string, unknown>, message: string) => void warnings.push(message) };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'gatehouse-perm-'));
    umask = process.umask(0o000);
    warnings.length = 0;
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  const config = (dataDir: string) => parseConfig({ publicUrl: 'http://localhost:4180', dataDir }, { env: {} });

  it('creates the data folder 0700 and the database, -wal and -shm 0600 whatever the umask', async () => {
    const dataDir = path.join(root, 'new', 'data');
    const database = await openDatabase(config(dataDir), log);
    await sql`create table t (x integer)`.execute(database.db);
    await sql`insert into t values (1)`.execute(database.db);
    const file = path.join(dataDir, 'gatehouse.db');
    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(path.join(root, 'new')).toString(8)).toBe('700');
    expect(modeOf(file).toString(8)).toBe('600');
    expect(modeOf(`${file}-wal`).toString(8)).toBe('600');
    expect(modeOf(`${file}-shm`).toString(8)).toBe('600');
    await database.close();
    expect(warnings).toEqual([]);
  });

  it("tightens Gatehouse's own files left loose, and warns about an operator's loose folder without changing it", async () => {
    const dataDir = path.join(root, 'shared');
    mkdirSync(dataDir, { mode: 0o755 });
    const file = path.join(dataDir, 'gatehouse.db');
    // A first run under a loose umask, before this fix: its files are still there.
    const first = await openDatabase(config(dataDir), log);
    await sql`create table t (x integer)`.execute(first.db);
    await first.close();
    closeSync(openSync(`${file}-wal`, 'a'));
    chmodSync(file, 0o644);
    chmodSync(`${file}-wal`, 0o666);
    warnings.length = 0;

    const database = await openDatabase(config(dataDir), log);
    expect(modeOf(file).toString(8)).toBe('600');
    expect(modeOf(`${file}-wal`).toString(8)).toBe('600');
    expect(modeOf(dataDir).toString(8)).toBe('755');
    expect(warnings.some((message) => message.includes(dataDir) && message.includes('755'))).toBe(true);
    expect(warnings.some((message) => message.includes(file) && message.includes('644'))).toBe(true);
    await database.close();
  });

  it('keeps development keys 0600 in a 0700 folder', () => {
    const dataDir = path.join(root, 'dev');
    loadSecrets(config(dataDir));
    const file = path.join(dataDir, 'dev-secrets.json');
    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(file).toString(8)).toBe('600');
    chmodSync(file, 0o644);
    loadSecrets(config(dataDir));
    expect(modeOf(file).toString(8)).toBe('600');
  });
});
