import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';
import { decodedBody, rawRequest } from './support/rawHttp.js';
import { WHOLE_LIMIT } from '../../src/proxy/compression.js';

/**
 * The proxy compresses the answers of an app whose operator turned `compress` on, where the request is
 * the app's own page or the person's own navigation (`Sec-Fetch-Site: same-origin` or `none`), the
 * client accepts it and the app did not (proxy/compression.ts), and leaves alone what must not be:
 * answers to other sites' requests (BREACH), event streams, ranges, encoded or incompressible bodies,
 * `no-transform`, HEAD, and every answer of an app that left `compress` at its default (off). The
 * upstream is a real server answering each path its own way; the paths are public, so no sign-in.
 */
const html = `<!doctype html><title>Report</title>${'<p>Quarterly numbers, region by region.</p>\n'.repeat(500)}`;
const json = JSON.stringify(Array.from({ length: 400 }, (_, index) => ({ id: index, name: `item ${index}`, tags: ['a', 'b'] })));
const png = randomBytes(20_000);
/** Longer than the proxy gathers whole (WHOLE_LIMIT): compressed as it streams. */
const log = Array.from({ length: 3000 }, (_, index) => `${index} GET /reports/${index % 17} 200 ${(index * 7919) % 1000} ms`).join('\n');

const PATHS = ['/page', '/log', '/lying', '/chunked', '/small', '/image', '/encoded', '/no-transform', '/range', '/events', '/search'];
/** What the app puts next to whatever a search reflects: a secret of the person's (a CSRF token, say). */
const SECRET = 'csrf=9f86d081884c7d65';

let upstream: Server;
let idp: HostileIdp;
let gatehouse: RunningGatehouse;
let port: number;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    if (request.url?.startsWith('/search?')) {
      // A page that reflects the query beside a secret: what BREACH needs.
      const query = new URL(request.url, 'http://upstream').searchParams.get('q') ?? '';
      const page = `<!doctype html><p>${SECRET}</p><p>You searched for ${query}</p>${'<p>No results yet.</p>\n'.repeat(80)}`;
      return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) }).end(page);
    }
    switch (request.url) {
      case '/page':
        return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html), etag: '"v1"', vary: 'Cookie' }).end(html);
      case '/log':
        return response.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(log) }).end(log);
      case '/lying':
        // Fewer bytes than the length announced, then the connection closes: an app that failed midway.
        response.socket?.end(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(html) + 1000}\r\n\r\n${html}`);
        return;
      case '/chunked':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(json.slice(0, 1000));
        return response.end(json.slice(1000));
      case '/small':
        return response.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok');
      case '/image':
        return response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      case '/encoded': {
        const body = gzipSync(html);
        return response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': body.length }).end(body);
      }
      case '/no-transform':
        return response.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, no-transform', 'content-length': Buffer.byteLength(html) }).end(html);
      case '/range':
        return response.writeHead(206, { 'content-type': 'text/html', 'content-range': `bytes 0-1999/${Buffer.byteLength(html)}`, 'content-length': 2000 }).end(html.slice(0, 2000));
      case '/events':
        // One event now; the stream stays open until the client leaves.
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(`data: ${'first event '.repeat(200)}\n\n`);
        return;
      default:
        return response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  idp = await startHostileIdp('gatehouse');
  port = await freePort();
  gatehouse = await startGatehouse({
    port,
    providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      { id: 'reports', name: 'Reports', publicUrl: `http://reports.localhost:${port}`, upstream: upstreamUrl, publicPaths: PATHS, compress: true, policy: { allow: [{ anyUser: true }] } },
      // compress left at its default: off.
      { id: 'raw', name: 'Raw', publicUrl: `http://raw.localhost:${port}`, upstream: upstreamUrl, publicPaths: PATHS, policy: { allow: [{ anyUser: true }] } },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
  upstream?.close();
});

/**
 * A request to the app `host` as a browser sends one from the app's own page (`Sec-Fetch-Site:
 * same-origin`, unless `headers` say otherwise), its answer's bytes as they came.
 */
const get = (host: string, path: string, headers: Record<string, string | string[] | undefined> = {}, method = 'GET') => {
  const merged: Record<string, string | string[] | undefined> = { host: `${host}.localhost:${port}`, 'sec-fetch-site': 'same-origin', ...headers };
  const sent: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) sent[name] = value;
  return rawRequest(port, path, sent, method);
};
const decoded = decodedBody;

describe('compressing proxied answers', () => {
  it('sends brotli to a browser that offers it, the same bytes once decoded, and marks the answer as varying', async () => {
    const answer = await get('reports', '/page', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('br');
    // Known length and short: compressed whole, and sent with its compressed length rather than chunked.
    expect(answer.headers['content-length']).toBe(String(answer.body.length));
    expect(answer.headers.vary).toBe('Cookie, Accept-Encoding, Sec-Fetch-Site');
    // The bytes differ from those the app's ETag names: a weak validator now.
    expect(answer.headers.etag).toBe('W/"v1"');
    expect(decoded(answer).toString()).toBe(html);
    expect(answer.body.length).toBeLessThan(Buffer.byteLength(html) / 10);
  });

  it('compresses a long answer as it streams, without a length', async () => {
    expect(Buffer.byteLength(log)).toBeGreaterThan(WHOLE_LIMIT);
    const answer = await get('reports', '/log', { 'accept-encoding': 'br' });
    expect(answer.headers['content-encoding']).toBe('br');
    expect(answer.headers['content-length']).toBeUndefined();
    expect(answer.headers['transfer-encoding']).toBe('chunked');
    expect(decoded(answer).toString()).toBe(log);
  });

  it('answers 502 to an answer cut short, as it was gathered whole before anything was sent', async () => {
    // Threat: a truncated body passed on as if complete (a compressed one would even decode cleanly).
    const answer = await get('reports', '/lying', { 'accept-encoding': 'br' });
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.status).toBe(502);
  });

  it('sends gzip where that is all the client takes, also for an answer of unknown length', async () => {
    const page = await get('reports', '/page', { 'accept-encoding': 'gzip' });
    expect(page.headers['content-encoding']).toBe('gzip');
    expect(decoded(page).toString()).toBe(html);
    const chunked = await get('reports', '/chunked', { 'accept-encoding': 'br;q=0, gzip' });
    expect(chunked.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(chunked).toString())).toHaveLength(400);
  });

  it('leaves an answer alone where compressing would be wrong or useless', async () => {
    const offer = { 'accept-encoding': 'br, gzip' };
    const unchanged = async (path: string, expected: Buffer | string, status = 200) => {
      const answer = await get('reports', path, offer);
      expect(answer.status, path).toBe(status);
      expect(answer.headers.vary, path).toBeUndefined();
      expect(answer.body.equals(Buffer.from(expected)), path).toBe(true);
      return answer;
    };
    // Already encoded by the app: passed through as it is, never encoded twice.
    expect((await unchanged('/encoded', gzipSync(html))).headers['content-encoding']).toBe('gzip');
    await unchanged('/image', png);
    await unchanged('/small', 'ok');
    await unchanged('/no-transform', html);
    // A range is of the uncompressed bytes.
    await unchanged('/range', html.slice(0, 2000), 206);
    // No offer, or only identity: as the app sent it, saying what it would have been compressed for.
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, br;q=0' }] as Array<Record<string, string>>) {
      const answer = await get('reports', '/page', headers);
      expect(answer.headers['content-encoding'], JSON.stringify(headers)).toBeUndefined();
      expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(html)));
      expect(answer.headers.vary).toBe('Cookie, Accept-Encoding, Sec-Fetch-Site');
    }
    // The person's own navigation (typed, a bookmark) is compressed too.
    expect((await get('reports', '/page', { ...offer, 'sec-fetch-site': 'none' })).headers['content-encoding']).toBe('br');
    // HEAD: the headers of the uncompressed answer, no body.
    const head = await get('reports', '/page', offer, 'HEAD');
    expect(head.headers['content-encoding']).toBeUndefined();
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(html)));
    // An app that left compress at its default (off) gets none, whatever the client offers, and no Vary of ours.
    const raw = await get('raw', '/page', offer);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.headers.vary).toBe('Cookie');
    expect(raw.body.toString()).toBe(html);
  });

  // Threat: BREACH. A page on another site makes the browser fetch a page of the app (with the person's
  // cookies) that reflects a guess next to a secret; compressed, a guess that matches the secret
  // compresses better, and the length the attacker can observe gives the secret away character by
  // character. Only answers to the app's own pages and the person's own navigations are compressed: a
  // request from another site, a sibling app's host (same-site), an old browser that sends no
  // Sec-Fetch-Site, or any other value gets the app's bytes as they are, whose length depends on the
  // guess's length only.
  it('never compresses an answer to a request from another site, a sibling host, or of unknown origin', async () => {
    const offer = { 'accept-encoding': 'gzip, deflate, br' };
    const right = `/search?q=${encodeURIComponent(SECRET)}`;
    const wrong = `/search?q=${encodeURIComponent('csrf=0123456789abcdef')}`;
    // Same-origin, the oracle exists: the right guess compresses smaller than a wrong one of the same length.
    const [sameRight, sameWrong] = [await get('reports', right, offer), await get('reports', wrong, offer)];
    expect(sameRight.headers['content-encoding']).toBe('br');
    expect(sameRight.body.length).toBeLessThan(sameWrong.body.length);
    const sites: Array<string | string[] | undefined> = ['cross-site', 'same-site', undefined, '', 'Same-Origin', 'SAME-ORIGIN', 'same-origin;x', 'same-origin, cross-site', ['same-origin', 'cross-site'], ['none', 'none'], 'nested-navigate'];
    for (const site of sites) {
      // undefined: no Sec-Fetch-Site line at all, as an old browser sends.
      const headers = { ...offer, 'sec-fetch-site': site };
      const [a, b] = [await get('reports', right, headers), await get('reports', wrong, headers)];
      for (const answer of [a, b]) {
        expect(answer.headers['content-encoding'], JSON.stringify(site)).toBeUndefined();
        expect(answer.headers.vary, JSON.stringify(site)).toBe('Accept-Encoding, Sec-Fetch-Site');
      }
      expect(a.body.length, JSON.stringify(site)).toBe(b.body.length);
      expect(a.body.toString()).toContain(SECRET);
    }
  });

  it('never holds back an event stream: its first event arrives while the stream is still open', async () => {
    const first = await new Promise<{ headers: IncomingHttpHeaders; data: string }>((resolve, reject) => {
      const request = httpRequest(
        { host: '127.0.0.1', port, path: '/events', headers: { host: `reports.localhost:${port}`, 'accept-encoding': 'br, gzip', accept: 'text/event-stream' } },
        (response) => {
          response.once('data', (chunk: Buffer) => {
            resolve({ headers: response.headers, data: chunk.toString() });
            request.destroy();
          });
        },
      );
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.setTimeout(5_000, () => reject(new Error('no event within 5 s')));
      request.end();
    });
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(first.data).toMatch(/^data: first event/);
  });
});
