import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from '../support/browser.js';
import { startBuiltProcess, type BuiltProcess } from '../support/builtProcess.js';
import { freePort } from '../../support/ports.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from '../support/testStore.js';

// Threat: a file edited while Gatehouse was stopped (a partner's domain removed, say), and the sessions
// that file no longer admits living on after the restart, up to a week. At start, every live session is
// judged by the rules read (sessions/admissionReview.ts), on the built server as operators run it: one
// process, and a node of two workers (the first worker reviews).

describe.each([1, 2])('at start, with workers: %i', (workers) => {
  let idp: HostileIdp;
  let store: TestStore;
  let dir: string;
  let file: string;
  let port: number;
  let running: BuiltProcess | undefined;
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32).toString('base64url') };

  const config = (allowedDomains: string[]) => ({
    mode: 'production',
    publicUrl: `http://localhost:${port}`,
    listen: { host: '127.0.0.1', port },
    ...storeConfig(store),
    workers,
    log: { level: 'info', format: 'json' },
    secrets: { cookieKey: secrets.cookieKey, encryptionKeys: [{ id: 'k1', key: secrets.encryptionKey }] },
    providers: [{ id: 'partner', name: 'Partner', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true, allowedDomains }],
  });

  async function start(allowedDomains: string[]): Promise<void> {
    writeFileSync(file, JSON.stringify(config(allowedDomains)));
    running = startBuiltProcess(file);
    await running.waitFor(workers > 1 ? `ready with ${workers} workers` : 'Gatehouse is ready');
  }

  beforeAll(async () => {
    idp = await startHostileIdp('gatehouse');
    idp.extraClaims = { email: 'mallory@partner.example' };
    store = await createTestStore();
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-admission-start-'));
    file = path.join(dir, 'gatehouse.yaml');
    port = await freePort();
  });
  afterAll(async () => {
    await running?.stop();
    await idp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (store) await removeTestStore(store);
  });

  it('ends the sessions a file narrowed while Gatehouse was stopped no longer admits', async () => {
    await start(['partner.example', 'example.com']);
    const browser = new ScriptedBrowser();
    const first = await browser.follow(await browser.request(`http://localhost:${port}/.gatehouse/sign-in/partner`), (url) => url.pathname.startsWith('/.gatehouse/callback/'));
    expect(first.stoppedAt).toBeDefined();
    expect((await browser.request(first.stoppedAt!.href)).status).toBe(303);
    const session = () => browser.request(`http://localhost:${port}/api/session`, { headers: { connection: 'close' } });
    expect((await session()).status).toBe(200);
    await running!.stop();

    // The partner's domain is gone from the file; Gatehouse starts again on the same database.
    await start(['example.com']);
    let answer = await session();
    for (let waited = 0; answer.status === 200 && waited < 10_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await session();
    }
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'session_ended', detail: expect.stringContaining('the rules of who may sign in here changed') });
    // The review says what it ended once it is through (a session is refused as soon as it is ended).
    await expect.poll(() => running!.output(), { timeout: 10_000 }).toContain('sessions ended: they no longer pass the rules of who may sign in');
    await running!.stop();
  });
});
