import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { OPEN_ORGANIZATION } from '../../../src/accounts/admission.js';
import { renderNginxSite } from '../../../../../e2e/support/deployFiles.js';
import { nginxMainConfig } from '../../../../../e2e/support/nginxConfig.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { NGINX, startNginx, type RunningNginx } from '../support/nginx.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * Debian's nginx running docs/deploy/nginx.conf and nginx-app.conf as operators copy them (only the
 * placeholders filled in), in front of a Gatehouse and an app that count the TCP connections they accept
 * and look at every request as it arrives. The shipped files keep nginx's connections to both open
 * (`upstream` blocks with `keepalive`, HTTP/1.1, no Connection header), and what a kept connection is
 * shared for must not let one client's bytes become another request on it.
 */

let gatehouse: RunningGatehouse;
let upstream: Upstream;
let nginx: RunningNginx | undefined;
let dir: string;
let port = 0;
let host = '';
let cookie = '';

/** What a server has accepted and been asked since `watch`: connections, and each request's line and Connection header. */
interface Seen {
  connections: number;
  requests: Array<{ method: string; url: string; httpVersion: string; connection: string | undefined }>;
}

function watch(server: Server): Seen {
  const seen: Seen = { connections: 0, requests: [] };
  server.on('connection', () => seen.connections++);
  const onRequest = (request: IncomingMessage) =>
    seen.requests.push({ method: request.method ?? '', url: request.url ?? '', httpVersion: request.httpVersion, connection: request.headers.connection });
  server.on('request', onRequest);
  server.on('upgrade', onRequest);
  return seen;
}

let atGatehouse: Seen;
let atApp: Seen;
/** Starts counting afresh (nginx's pools stay as they are). */
function reset(): void {
  for (const seen of [atGatehouse, atApp]) {
    seen.connections = 0;
    seen.requests.length = 0;
  }
}

beforeAll(async () => {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx; scripts/test.sh does it when run as root)');
  port = await freePort();
  host = `wiki.localhost:${port}`;
  upstream = await startUpstream();
  gatehouse = await startGatehouse({
    trustedProxies: ['127.0.0.1/8'],
    session: { claimsRefreshInterval: '1d' },
    providers: [{ id: 'corp', name: 'Corp', issuer: 'http://127.0.0.1:9', clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    // Served by nginx, which only asks Gatehouse (no upstream in gatehouse.yaml).
    apps: [{ id: 'wiki', name: 'Wiki', publicUrl: `http://${host}`, policy: { allow: [{ emails: ['bob@example.com'] }] } }],
  });
  atGatehouse = watch(gatehouse.app.server);
  atApp = watch(upstream.server);
  // bob, allowed, signed in through the real stores.
  const { accounts, sessions, appSessions } = gatehouse.services;
  const provider = { id: 'corp', name: 'Corp', allowedDomains: [], createUsers: true, trustEmail: false };
  const profile = { subject: 'bob', email: 'bob@example.com', emailVerified: true, name: 'Bob', picture: undefined, groups: [], sid: undefined, extra: {} };
  const { user, identity } = await accounts.signIn(provider, profile, OPEN_ORGANIZATION);
  const { session } = await sessions.create({ userId: user.id, identityId: identity.id, providerId: 'corp' });
  cookie = `gatehouse_app=${await appSessions.create(session.id, 'wiki', `http://${host}`)}`;

  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-nginx-keepalive-'));
  const at = (name: string) => path.join(dir, name);
  const site = renderNginxSite({
    listen: `127.0.0.1:${await freePort()}`,
    gatehouse: `127.0.0.1:${gatehouse.port}`,
    apps: [{ id: 'wiki', host: 'wiki.localhost', listen: `127.0.0.1:${port}`, upstream: `127.0.0.1:${upstream.port}` }],
  });
  writeFileSync(at('gatehouse.conf'), site);
  writeFileSync(at('nginx.conf'), `${process.getuid?.() === 0 ? 'user root;\n' : ''}${nginxMainConfig(dir, `    include ${JSON.stringify(at('gatehouse.conf'))};`)}`);
  nginx = await startNginx(dir, () => get('/.gatehouse/jwks.json'));
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await gatehouse?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A request to the app's host through nginx, on a connection of its own. */
function get(pathAndQuery: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: pathAndQuery, agent: false, headers: { host, ...headers } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/**
 * Bytes written to nginx as they are (a request that asks "Connection: close"), and everything it
 * answers until it closes the connection. Not half-closed: nginx takes that for a client gone away.
 */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('end', () => {
      socket.destroy();
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

/** The body of a raw answer sent in chunks (nginx passes the app's answer on that way). */
function dechunked(answer: string): string {
  let rest = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  let body = '';
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return body;
    body += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** What the app answers: the request it received (support/upstream.ts). */
const received = (body: string) => JSON.parse(body) as { method: string; url: string; headers: Record<string, string | undefined>; bodyLength: number };

/** `count` requests made by `make`, `concurrency` at a time. */
async function inParallel<T>(count: number, concurrency: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await make(index);
      }
    }),
  );
  return results;
}

describe('nginx in front, configured from docs/deploy/', () => {
  // Cost (and a denial of service by mere traffic): without a kept-alive pool, nginx opens a TCP
  // connection to Gatehouse for every check (HTTP/1.0, "Connection: close") and another to the app for
  // every request. The handshakes cost Gatehouse, nginx and the app more CPU than the check itself
  // (bench/README.md, "Forward-auth behind nginx and Caddy"), and each closed connection stays in
  // TIME_WAIT for a minute: on nginx's side, its local ports to one address (about 28,000 on Linux) last
  // for a few hundred new connections a second, and then every request fails.
  it('reuses a few connections to Gatehouse and to the app for many requests', async () => {
    reset();
    const CONCURRENCY = 4;
    // Allowed (the check, then the app), signed out (the check, then Gatehouse's answer), and Gatehouse's
    // own paths on the app's host: every location that talks to Gatehouse.
    const asks = [
      ...Array.from({ length: 90 }, () => ['/docs?page=1', { cookie }, 200] as const),
      ...Array.from({ length: 30 }, () => ['/docs', { accept: 'application/json' }, 401] as const),
      ...Array.from({ length: 30 }, () => ['/.gatehouse/jwks.json', {}, 200] as const),
    ];
    const answers = await inParallel(asks.length, CONCURRENCY, (index) => get(asks[index]![0], asks[index]![1]));
    expect(answers.map((answer) => answer.status)).toEqual(asks.map(([, , status]) => status));
    // bob's identity reached the app on every allowed request.
    for (const answer of answers.slice(0, 90)) expect(received(answer.body).headers['x-gatehouse-email']).toBe('bob@example.com');

    // 90 checks, 30 checks and 30 answers for the signed-out requests, 30 keys: 180 requests to Gatehouse.
    expect(atGatehouse.requests).toHaveLength(180);
    expect(atApp.requests).toHaveLength(90);
    // Each over HTTP/1.1 and without "Connection: close": the connection stays open for the next one.
    for (const request of [...atGatehouse.requests, ...atApp.requests]) expect(request, request.url).toMatchObject({ httpVersion: '1.1', connection: undefined });
    // nginx opens a connection only when every open one is busy (one per request in flight here) or
    // has been idle for longer than its pool keeps one: twice that, for a pause on a busy machine,
    // against 180 and 90 without the pools.
    expect(atGatehouse.connections).toBeLessThanOrEqual(2 * CONCURRENCY);
    expect(atApp.connections).toBeLessThanOrEqual(2 * CONCURRENCY);
  });

  // Threat: a connection from the app's pool handed over to a WebSocket and then reused, or the upgrade
  // lost because the pool's requests send no Connection header: the app must see "Connection: upgrade"
  // on the upgrade only, and plain requests after the socket must still get their own answers.
  it('passes a WebSocket upgrade on, and never puts the upgraded connection back in the pool', async () => {
    reset();
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host, cookie } });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.once('open', () => socket.send('hello'));
      socket.once('message', (data: Buffer) => resolve(data.toString()));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
      socket.once('error', reject);
    });
    expect(reply).toBe('echo from bob@example.com: hello');
    expect(atApp.requests).toEqual([{ method: 'GET', url: '/ws', httpVersion: '1.1', connection: 'upgrade' }]);
    await new Promise((resolve) => {
      socket.once('close', resolve);
      socket.close();
    });

    const after = await inParallel(10, 2, () => get('/after-the-socket', { cookie }));
    for (const answer of after) {
      expect(answer.status).toBe(200);
      expect(received(answer.body).url).toBe('/after-the-socket');
    }
    expect(atApp.requests.slice(1).every((request) => request.connection === undefined)).toBe(true);
  });

  // Threat: request smuggling over a kept-alive connection. A connection to the app or to Gatehouse now
  // carries one client's request after another's: were nginx to pass a client's body framing on, the
  // bytes after the body nginx judged would be read by the app as a request of its own (unchecked,
  // carrying whatever identity headers the client wrote) or would answer the next client's request.
  it("never lets a client's body become a request of its own on a kept connection", async () => {
    reset();
    const smuggled = `GET /smuggled HTTP/1.1\r\nHost: ${host}\r\nX-Gatehouse-Email: ceo@example.com\r\n\r\n`;
    // Both lengths at once (RFC 9112 §6.3: a server may refuse it, and nginx does).
    const both = await raw(`POST /form HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nContent-Length: ${5 + smuggled.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n${smuggled}`);
    expect(both).toMatch(/^HTTP\/1\.1 400 /);
    // A chunked body that holds a request: nginx reads the body itself and sends the app its own framing.
    const chunk = smuggled.length.toString(16);
    const chunked = await raw(`POST /form HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk}\r\n${smuggled}\r\n0\r\n\r\n`);
    expect(chunked).toMatch(/^HTTP\/1\.1 200 /);
    expect(received(dechunked(chunked))).toMatchObject({ method: 'POST', url: '/form', bodyLength: smuggled.length });
    // And the connections are still in step: the next requests get their own answers.
    for (const pathAndQuery of ['/next?a=1', '/next?a=2']) expect(received((await get(pathAndQuery, { cookie })).body).url).toBe(pathAndQuery);

    expect(atApp.requests.map((request) => `${request.method} ${request.url}`)).toEqual(['POST /form', 'GET /next?a=1', 'GET /next?a=2']);
    expect(atGatehouse.requests.every((request) => request.url === '/.gatehouse/auth/wiki')).toBe(true);
  });
});
