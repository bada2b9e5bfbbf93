import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { WebSocket, WebSocketServer } from 'ws';
import { ScriptedBrowser } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';


/** The download: 48 chunks of 2 KiB, one every 50 ms (about 2.4 s), of unknown length (chunked). */
const CHUNKS = 48;
const CHUNK = 2048;
const download = randomBytes(CHUNKS * CHUNK);
const downloadSha = createHash('sha256').update(download).digest('hex');

/**
 * An app behind Gatehouse on loopback: a WebSocket echo on /ws, and on /download an answer that
 * dribbles its bytes, so that both are open while the configuration is reloaded.
 */
async function startSlowUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.url !== '/download') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      response.write(download.subarray(sent * CHUNK, (sent + 1) * CHUNK));
      if (++sent === CHUNKS) {
        clearInterval(timer);
        response.end();
      }
    }, 50);
    response.on('close', () => clearInterval(timer));
  });
  const sockets = new WebSocketServer({ server, path: '/ws' });
  sockets.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo: ${data.toString()}`)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The check, on the built server as an operator runs it: a config change applied with
 * `kill -HUP` while a WebSocket and a download through the proxy stay open. Once as one process, once
 * with two workers (the primary reads the file, every worker applies it).
 */
describe.each([1, 2])('SIGHUP with workers: %i', (workers) => {
  let upstream: Awaited<ReturnType<typeof startSlowUpstream>>;
  let store: TestStore;
  let dir: string;
  let file: string;
  let port: number;
  /** The metrics listener, where an operator reads each check of /readyz. */
  let metricsPort: number;
  let gatehouse: ChildProcess;
  let idp: HostileIdp;
  let running: BuiltProcess;
  const output = () => running.output();

  const config = (overrides: Record<string, unknown> = {}) => ({
    mode: 'production',
    publicUrl: `http://localhost:${port}`,
    listen: { host: '127.0.0.1', port },
    ...storeConfig(store),
    workers,
    log: { level: 'info', format: 'json' },
    secrets: { cookieKey: secrets.cookieKey, encryptionKeys: [{ id: 'k1', key: secrets.encryptionKey }] },
    organization: { name: 'Before' },
    metrics: { listen: { host: '127.0.0.1', port: metricsPort } },
    admins: { emails: ['mallory@example.com'] },
    providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      {
        id: 'live',
        name: 'Live',
        publicUrl: `http://live.localhost:${port}`,
        upstream: upstream.url,
        websockets: true,
        publicPaths: ['/ws', '/download'],
        policy: { allow: [{ anyUser: true }] },
      },
    ],
    ...overrides,
  });
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32).toString('base64url') };

  beforeAll(async () => {
    idp = await startHostileIdp('gatehouse');
    upstream = await startSlowUpstream();
    store = await createTestStore();
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-sighup-'));
    file = path.join(dir, 'gatehouse.yaml');
    port = await freePort();
    metricsPort = await freePort();
    writeFileSync(file, JSON.stringify(config()));
    running = startBuiltProcess(file);
    gatehouse = running.child;
    await running.waitFor(workers > 1 ? `ready with ${workers} workers` : 'Gatehouse is ready');
  });

  afterAll(async () => {
    await running?.stop();
    await upstream?.close();
    await idp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (store) await removeTestStore(store);
  });

  /** A GET on a connection of its own (with workers, each new connection may reach another worker). */
  const getJson = async <T,>(pathname: string): Promise<T> => (await fetch(`http://127.0.0.1:${port}${pathname}`, { headers: { connection: 'close' } })).json() as Promise<T>;
  const organization = async () => (await getJson<{ organization: { name: string } }>('/api/providers')).organization.name;
  /** Every worker answers `expected`: asked on enough connections in a row. */
  async function everyWorkerSays(ask: () => Promise<unknown>, expected: unknown): Promise<void> {
    for (let waited = 0, agreeing = 0; agreeing < 4 * workers; waited += 50) {
      if (waited > 10_000) throw new Error(`not every worker says ${JSON.stringify(expected)}:\n${output()}`);
      agreeing = JSON.stringify(await ask()) === JSON.stringify(expected) ? agreeing + 1 : 0;
      if (agreeing === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('applies a change while a WebSocket and a download through the proxy stay open', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `live.localhost:${port}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    const echo = (text: string) =>
      new Promise<string>((resolve) => {
        socket.once('message', (data) => resolve(data.toString()));
        socket.send(text);
      });
    expect(await echo('before')).toBe('echo: before');

    const received: Buffer[] = [];
    let receivedAfterReload = 0;
    let reloaded = false;
    const downloaded = new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      const get = httpRequest(`http://127.0.0.1:${port}/download`, { headers: { host: `live.localhost:${port}` } }, (response) => {
        response.on('data', (chunk: Buffer) => {
          received.push(chunk);
          if (reloaded) receivedAfterReload += chunk.length;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(received) }));
        response.on('error', reject);
      });
      get.on('error', reject);
      get.end();
    });
    // The download is under way.
    for (let waited = 0; received.length === 0; waited += 20) {
      if (waited > 5_000) throw new Error('the download did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    expect(await organization()).toBe('Before');
    writeFileSync(file, JSON.stringify(config({ organization: { name: 'After' } })));
    process.kill(gatehouse.pid!, 'SIGHUP');
    await everyWorkerSays(organization, 'After');
    reloaded = true;
    expect(output()).toContain('configuration reloaded');

    // The WebSocket still carries messages both ways, and the download finishes whole.
    expect(await echo('after')).toBe('echo: after');
    const { status, body } = await downloaded;
    expect(status).toBe(200);
    expect(receivedAfterReload).toBeGreaterThan(0);
    expect(body.length).toBe(download.length);
    expect(createHash('sha256').update(body).digest('hex')).toBe(downloadSha);
    expect(await echo('still')).toBe('echo: still');
    // Nothing closed it meanwhile.
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
    await closed;
  });

  it('an invalid file is refused: the node keeps serving with the configuration before, and /readyz says why', async () => {
    writeFileSync(file, JSON.stringify(config({ organization: { name: 'Refused' }, listen: { host: '127.0.0.1', port: port + 1 } })));
    process.kill(gatehouse.pid!, 'SIGHUP');
    type Ready = { status: string; checks: { config: { lastReload: { outcome: string; problems?: string[] } | null } } };
    await everyWorkerSays(async () => {
      // With workers, the primary's listener asks each ready worker in turn.
      const ready = (await (await fetch(`http://127.0.0.1:${metricsPort}/readyz`, { headers: { connection: 'close' } })).json()) as Ready;
      return [ready.status, ready.checks.config.lastReload?.outcome, ready.checks.config.lastReload?.problems?.[0]?.split(':')[0]];
    }, ['ready', 'refused', 'listen.port']);
    expect(output()).toContain('configuration reload refused');
    await everyWorkerSays(organization, 'After');
    expect(gatehouse.exitCode).toBeNull();
  });

  it("the console's Reload configuration applies the file on every worker, and answers what changed", async () => {
    const admin = new ScriptedBrowser();
    const portal = `http://localhost:${port}`;
    expect((await admin.follow(await admin.request(`${portal}/.gatehouse/sign-in/idp`))).hop.status).toBe(200);
    const { csrfToken } = JSON.parse((await admin.request(`${portal}/api/csrf`)).body) as { csrfToken: string };
    writeFileSync(file, JSON.stringify(config({ organization: { name: 'From the console' } })));
    const answer = await admin.request(`${portal}/api/admin/config/reload`, { method: 'POST', headers: { origin: portal, 'x-csrf-token': csrfToken } });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ outcome: 'applied', changes: { settings: ['organization.name'] }, config: { lastReload: { outcome: 'applied' } } });
    // Every worker has it as soon as the answer is there: the primary waited for all of them.
    for (let i = 0; i < 4 * workers; i++) expect(await organization()).toBe('From the console');
  });
});
