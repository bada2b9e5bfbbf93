import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { freePort } from '../support/ports.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';

/** The worker processes of a primary (its children running main.js). */
function workersOf(primary: number): number[] {
  let children: number[];
  try {
    children = execFileSync('pgrep', ['-P', String(primary)]).toString().trim().split('\n').map(Number);
  } catch {
    return [];
  }
  return children.filter((pid) => {
    try {
      return execFileSync('ps', ['-o', 'args=', '-p', String(pid)]).toString().includes('main.js');
    } catch {
      return false;
    }
  });
}

/**
 * `workers: 2`: a worker started again after a crash serves the configuration in force (the one the
 * node started with, or the last reload applied), handed over by the primary, not whatever the file
 * says now.
 */
describe('a worker started again after a crash', () => {
  let store: TestStore;
  let dir: string;
  let file: string;
  let port: number;
  let running: BuiltProcess;
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32).toString('base64url') };

  const config = (organization: string, level = 'info') => ({
    mode: 'production',
    publicUrl: `http://localhost:${port}`,
    listen: { host: '127.0.0.1', port },
    ...storeConfig(store),
    workers: 2,
    log: { level, format: 'json' },
    secrets: { cookieKey: secrets.cookieKey, encryptionKeys: [{ id: 'k1', key: secrets.encryptionKey }] },
    organization: { name: organization },
  });

  beforeAll(async () => {
    store = await createTestStore();
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-worker-config-'));
    file = path.join(dir, 'gatehouse.yaml');
    port = await freePort();
    writeFileSync(file, JSON.stringify(config('Started')));
    running = startBuiltProcess(file);
    await running.waitFor('ready with 2 workers');
  });

  afterAll(async () => {
    await running?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (store) await removeTestStore(store);
  });

  /** The organisation's name as one worker says it (a connection of its own: the next worker in turn). */
  const organization = async () =>
    ((await (await fetch(`http://127.0.0.1:${port}/api/providers`, { headers: { connection: 'close' } })).json()) as { organization: { name: string } }).organization.name;
  /** What every worker says: asked on enough connections in a row. */
  async function everyWorkerSays(expected: string): Promise<void> {
    for (let i = 0; i < 8; i++) expect(await organization()).toBe(expected);
  }
  /** Kills one worker and waits until its replacement listens (each worker logs its start-up line). */
  async function killAWorker(): Promise<void> {
    const started = running.output().split('listening on').length;
    const [victim] = workersOf(running.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await running.waitFor('a worker stopped unexpectedly');
    for (let waited = 0; running.output().split('listening on').length <= started; waited += 100) {
      if (waited > 20_000) throw new Error(`no worker started again:\n${running.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(workersOf(running.child.pid!)).toHaveLength(2);
  }

  it('serves the configuration in force, not a file edited since without a reload', async () => {
    await everyWorkerSays('Started');
    writeFileSync(file, JSON.stringify(config('Edited, not reloaded')));
    await killAWorker();
    await everyWorkerSays('Started');
  });

  it('starts, and serves the configuration in force, when the file is broken meanwhile', async () => {
    writeFileSync(file, 'organization: [this is not\n  valid: yaml');
    await killAWorker();
    await everyWorkerSays('Started');
  });

  it('serves what the last reload applied', async () => {
    writeFileSync(file, JSON.stringify(config('Reloaded')));
    process.kill(running.child.pid!, 'SIGHUP');
    await running.waitFor('configuration reloaded');
    await everyWorkerSays('Reloaded');
    // A reload the node refused (a restart-only setting changed) is not what a new worker gets.
    writeFileSync(file, JSON.stringify({ ...config('Refused'), listen: { host: '127.0.0.1', port: port + 1 } }));
    process.kill(running.child.pid!, 'SIGHUP');
    await running.waitFor('configuration reload refused');
    await killAWorker();
    await everyWorkerSays('Reloaded');
  });

  it("never puts the configuration's secrets on a worker's command line, in its environment or in the log", () => {
    // Threat: secrets handed to a worker where other local users or log readers see them (a process's
    // command line is world-readable in /proc).
    for (const pid of workersOf(running.child.pid!)) {
      for (const what of ['cmdline', 'environ']) {
        const text = readFileSync(`/proc/${pid}/${what}`, 'utf8');
        expect(text).not.toContain(secrets.cookieKey);
        expect(text).not.toContain(secrets.encryptionKey);
        expect(text).not.toContain('Reloaded');
      }
    }
    expect(running.output()).not.toContain(secrets.cookieKey);
    expect(running.output()).not.toContain(secrets.encryptionKey);
  });

  // Regression: with workers, the primary kept the level it started with ("stopping Gatehouse" at info
  // under log.level: warn). Last: it stops the node.
  it('a reloaded log.level applies to every worker and to the primary', async () => {
    writeFileSync(file, JSON.stringify(config('Verbose', 'debug')));
    process.kill(running.child.pid!, 'SIGHUP');
    await everyWorkerSays('Verbose');
    await running.waitFor('"msg":"incoming request"');

    writeFileSync(file, JSON.stringify(config('Quiet', 'warn')));
    process.kill(running.child.pid!, 'SIGHUP');
    await everyWorkerSays('Quiet');
    const from = running.output().length;
    await organization();
    await running.stop();
    const after = running
      .output()
      .slice(from)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; pid: number; msg: string });
    // Stopping is logged at info by the primary and by each worker: none of it at warn.
    expect(after.filter((line) => line.level < 40)).toEqual([]);
  });
});
