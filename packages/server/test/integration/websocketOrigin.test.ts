import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { exchange, signIn, startProxyRig, type ProxyRig } from '../security/support/proxyRig.js';

/**
 * Threat: Cross-Site WebSocket Hijacking. A page on evil.example opens `ws://app/…`; the browser sends
 * the app host's cookie with the handshake (SameSite=Lax does not stop it between sites on loopback, or
 * on hosts sharing a registrable domain), and no CORS check applies to what the page then reads and
 * sends. An upgrade must come from the app's own origin; one without Origin is no browser's (browsers
 * always send it) and is checked like any request.
 */
let rig: ProxyRig;
let cookie: string;

beforeAll(async () => {
  rig = await startProxyRig();
  ({ cookie } = await signIn(rig));
});

afterAll(async () => {
  await rig?.close();
});

/** Opens a socket to the echo app with the signed-in cookie; resolves with what happened. */
function open(options: { origin?: string; headers?: Record<string, string>; protocolVersion?: number; path?: string }): Promise<{ status: number; body: string; echo?: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${rig.port}${options.path ?? '/ws'}`, {
      headers: { host: rig.appHost, cookie, ...options.headers },
      ...(options.origin !== undefined ? { origin: options.origin } : {}),
      ...(options.protocolVersion !== undefined ? { protocolVersion: options.protocolVersion } : {}),
    });
    socket.once('open', () => {
      socket.send('hello');
      socket.once('message', (data) => {
        socket.close();
        resolve({ status: 101, body: '', echo: data.toString() });
      });
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', reject);
  });
}

describe('WebSocket upgrades and Origin', () => {
  it('the app’s own origin passes', async () => {
    const answer = await open({ origin: rig.app });
    expect(answer.status).toBe(101);
    expect(answer.echo).toBe('echo from mallory@example.com: hello');
  });

  it('no Origin (not a browser) passes, checked like any request', async () => {
    expect((await open({})).status).toBe(101);
  });

  it.each([
    ['another site', 'http://evil.example'],
    ['a sibling app host on loopback', () => rig.closed],
    ['the app host on another port', 'http://echo.localhost:1'],
    ['the app host over https', () => `https://${rig.appHost}`],
    ['the portal', () => `http://localhost:${rig.port}`],
    ['a sandboxed frame or a file', 'null'],
    ['a suffix of the app origin', () => `${rig.app}.evil.example`],
  ] as Array<[string, string | (() => string)]>)('%s is refused with the catalogue’s 403, and nothing reaches the app', async (_label, origin) => {
    const before = rig.upstream.webSocketMessages();
    const answer = await open({ origin: typeof origin === 'function' ? origin() : origin });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'csrf_failed', status: 403 });
    expect(rig.upstream.webSocketMessages()).toBe(before);
  });

  it('the draft-8 Sec-WebSocket-Origin is held to the same rule', async () => {
    expect((await open({ origin: 'http://evil.example', protocolVersion: 8 })).status).toBe(403);
    expect((await open({ origin: rig.app, protocolVersion: 8 })).status).toBe(101);
  });

  // Node joins a repeated Origin into "a, b": never the app's origin, so refused whatever the order.
  it('a repeated Origin is refused, even when one copy is the app’s', async () => {
    const handshake = (origins: string[]) =>
      `GET /ws HTTP/1.1\r\nHost: ${rig.appHost}\r\nCookie: ${cookie}\r\n${origins.map((origin) => `Origin: ${origin}\r\n`).join('')}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
    expect((await exchange(rig, handshake([rig.app, 'http://evil.example']))).status).toBe(403);
    expect((await exchange(rig, handshake(['http://evil.example', rig.app]))).status).toBe(403);
    expect((await exchange(rig, handshake([rig.app, rig.app]))).status).toBe(403);
    expect((await exchange(rig, handshake(['']))).status).toBe(403);
  });
});
