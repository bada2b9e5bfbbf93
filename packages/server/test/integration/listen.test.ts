import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/http/listen.js';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { freePort } from '../support/ports.js';

/** Whether something answers HTTP at this address (a GET of /). */
async function answers(address: string): Promise<boolean> {
  try {
    const response = await fetch(`${address}/`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** Whether this machine has an IPv6 loopback to listen on. */
async function hasIpv6Loopback(): Promise<boolean> {
  const probe = Fastify();
  try {
    await probe.listen({ host: '::1', port: 0 });
    return true;
  } catch {
    return false;
  } finally {
    await probe.close();
  }
}

describe('the start-up line', () => {
  let dir: string | undefined;
  let running: BuiltProcess | undefined;
  afterAll(async () => {
    await running?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Regression: with `listen.host: localhost` the log named http://127.0.0.1 only, while ::1 listened too.
  it('names every address the server listens on, read from its sockets', async () => {
    const port = await freePort();
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-listen-'));
    const file = path.join(dir, 'gatehouse.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        mode: 'production',
        publicUrl: `http://localhost:${port}`,
        listen: { host: 'localhost', port },
        dataDir: path.join(dir, 'data'),
        log: { level: 'info', format: 'json' },
        secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] },
      }),
    );
    running = startBuiltProcess(file);
    await running.waitFor('Gatehouse is ready');
    const lines = running
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; addresses?: string[] });
    const startUp = lines.filter((line) => line.addresses);
    expect(startUp).toHaveLength(1);
    const expected = (await hasIpv6Loopback()) ? [`http://127.0.0.1:${port}`, `http://[::1]:${port}`] : [`http://127.0.0.1:${port}`];
    expect(startUp[0]!.addresses).toEqual(expected);
    expect(startUp[0]!.msg).toBe(`listening on ${expected.join(' and ')}`);
    // No other line names an address of its own (Fastify's "Server listening at" named one of the two).
    expect(lines.filter((line) => /listening at/i.test(line.msg))).toEqual([]);
    // And each one named really answers.
    for (const address of expected) expect(await answers(address), address).toBe(true);
  });
});

describe('listen()', () => {
  it('names the one address it was given, with the port the system chose', async () => {
    const app = Fastify();
    app.get('/', async () => 'hello');
    const listening = await listen(app, '127.0.0.1', 0);
    try {
      expect(listening.addresses).toHaveLength(1);
      expect(listening.addresses[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(listening.addresses[0]).not.toMatch(/:0$/);
      expect(await answers(listening.addresses[0]!)).toBe(true);
    } finally {
      await Promise.all([listening.close(), app.close()]);
    }
    // Closed: nothing answers there any more.
    expect(await answers(listening.addresses[0]!)).toBe(false);
  });

  it('for localhost, both loopbacks on one port, both closed by close()', async () => {
    const app = Fastify();
    app.get('/', async () => 'hello');
    const listening = await listen(app, 'localhost', 0);
    const ports = new Set(listening.addresses.map((address) => new URL(address).port));
    expect(ports.size).toBe(1);
    expect(listening.addresses[0]).toMatch(/^http:\/\/127\.0\.0\.1:/);
    if (await hasIpv6Loopback()) expect(listening.addresses[1]).toMatch(/^http:\/\/\[::1\]:/);
    for (const address of listening.addresses) expect(await answers(address), address).toBe(true);
    await Promise.all([listening.close(), app.close()]);
    for (const address of listening.addresses) expect(await answers(address), address).toBe(false);
  });
});
