import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { get, type IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { freePort } from '../support/ports.js';
import { startUpstream, type Upstream } from './support/upstream.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';

/**
 * The built server as an operator runs it (`node packages/server/dist/main.js start`), stopped the way a
 * service manager stops it. `npm test` builds before it runs the tests.
 */
const main = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

let upstream: Upstream;
/** The data of the servers the tests start, one after the other. */
let store: TestStore | undefined;
/** Started by a test; killed here if a failing test left it running. */
let server: ChildProcess | undefined;
/** What it has written lately (JSON log lines). */
let output = '';

beforeAll(async () => {
  upstream = await startUpstream();
  store = await createTestStore();
});

afterAll(async () => {
  if (server?.exitCode === null) server.kill('SIGKILL');
  await upstream?.close();
  if (store) await removeTestStore(store);
});

async function startServer(port: number): Promise<ChildProcess> {
  const config = {
    publicUrl: `http://localhost:${port}`,
    // Both loopback addresses, as `localhost` listens in production too.
    listen: { host: 'localhost', port },
    ...storeConfig(store!),
    log: { level: 'warn', format: 'json' },
    apps: [{ id: 'pub', name: 'Public socket', publicUrl: 'http://pub.localhost:8443', upstream: upstream.url, websockets: true, publicPaths: ['/ws', '/stream'], policy: { allow: [{ anyUser: true }] } }],
  };
  const file = path.join(store!.dataDir, 'gatehouse.yaml');
  writeFileSync(file, JSON.stringify(config));
  server = spawn(process.execPath, [main, 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  output = '';
  const keep = (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-8_000));
  server.stdout!.on('data', keep);
  server.stderr!.on('data', keep);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`Gatehouse exited during start (${server.exitCode}):\n${output}`);
    const ready = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
    if (ready) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  server.kill('SIGKILL');
  throw new Error(`Gatehouse did not answer /healthz within 20 s:\n${output}`);
}

function openSocket(address: string, port: number): Promise<WebSocket | undefined> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://${address}:${port}/ws`, { headers: { host: 'pub.localhost:8443' } });
    socket.once('open', () => resolve(socket));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      // A machine without IPv6 loopback: Gatehouse listens on 127.0.0.1 only there.
      if (address === '[::1]' && ['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'ECONNREFUSED'].includes(error.code ?? '')) resolve(undefined);
      else reject(error);
    });
  });
}

describe('stopping', () => {
  it('on SIGTERM tells open WebSockets it is going away, on both loopback listeners, and exits', async () => {
    const port = await freePort();
    const running = await startServer(port);
    const sockets = (await Promise.all([openSocket('127.0.0.1', port), openSocket('[::1]', port)])).filter((socket) => socket !== undefined);
    const closes = sockets.map((socket) => new Promise<[number, string]>((resolve) => socket.once('close', (code, reason) => resolve([code, reason.toString()]))));
    const exited = once(running, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    running.kill('SIGTERM');
    // Before, the listeners waited for the open WebSockets, and the process never exited.
    expect(await exited).toEqual([0, null]);
    for (const closed of closes) expect(await closed).toEqual([1001, 'Gatehouse is shutting down']);
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('does not wait for ever for an answer that never ends: it exits after 15 s', async () => {
    const port = await freePort();
    const running = await startServer(port);
    const streaming = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = get({ host: '127.0.0.1', port, path: '/stream', headers: { host: 'pub.localhost:8443' } }, (response) => response.once('data', () => resolve(response)));
      request.once('error', reject);
    });
    streaming.on('error', () => undefined);
    const exited = once(running, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    running.kill('SIGTERM');
    expect(await exited).toEqual([1, null]);
    expect(output).toContain('still stopping after 15 s: exiting now');
  }, 25_000);
});
