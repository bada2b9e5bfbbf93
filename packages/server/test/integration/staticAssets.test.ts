import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { decodedBody, rawRequest } from './support/rawHttp.js';

/**
 * The front end's files as the server sends them: the build's brotli and gzip copies to a client that
 * accepts them (nothing compressed on a request), cached for good when fingerprinted, and no source map
 * published. The web root is a build's layout written here, a source map left in it on purpose.
 */
const script = `export function greet(name) { return 'Hello, ' + name; }\n${'console.log(greet("world"));\n'.repeat(200)}`;
const page = (title: string) => `<!doctype html><html lang="en"><title>${title}</title>${'<p>page</p>'.repeat(200)}</html>`;

let webRoot: string;
let gatehouse: RunningGatehouse;

async function writeWithCopies(file: string, content: string) {
  await writeFile(file, content);
  await writeFile(`${file}.br`, brotliCompressSync(content));
  await writeFile(`${file}.gz`, gzipSync(content));
}

beforeAll(async () => {
  webRoot = await mkdtemp(path.join(tmpdir(), 'gatehouse-web-'));
  await mkdir(path.join(webRoot, 'assets'));
  await writeWithCopies(path.join(webRoot, 'assets', 'index-AbC123.js'), script);
  await writeFile(path.join(webRoot, 'assets', 'index-AbC123.js.map'), '{"version":3,"sources":["src/main.tsx"],"sourcesContent":["secret"]}');
  await writeFile(path.join(webRoot, 'assets', 'tiny-XyZ789.css'), 'body{margin:0}');
  await writeWithCopies(path.join(webRoot, 'index.html'), page('Console'));
  await writeWithCopies(path.join(webRoot, 'sign-in.html'), page('Sign in'));
  await writeFile(path.join(webRoot, 'robots.txt'), 'User-agent: *\nDisallow: /\n');
  gatehouse = await startGatehouse({ webRoot });
});

afterAll(async () => {
  await gatehouse?.close();
  if (webRoot) await rm(webRoot, { recursive: true, force: true });
});

const get = (pathname: string, headers: Record<string, string> = {}) => rawRequest(gatehouse.port, pathname, { host: `localhost:${gatehouse.port}`, ...headers });
const decoded = decodedBody;

describe('the front end\'s files', () => {
  it('sends the brotli copy to a browser that offers it, gzip where that is all it takes, the file itself otherwise', async () => {
    const asset = '/assets/index-AbC123.js';
    const br = await get(asset, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^(?:text|application)\/javascript/);
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(decoded(br).toString()).toBe(script);
    expect(br.body.length).toBeLessThan(script.length / 5);

    const gzip = await get(asset, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decoded(gzip).toString()).toBe(script);

    const identity = await get(asset);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toMatch(/accept-encoding/i);
    expect(identity.body.toString()).toBe(script);

    // A file the build left uncompressed (too small to gain) is sent as it is to everyone.
    const small = await get('/assets/tiny-XyZ789.css', { 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body.toString()).toBe('body{margin:0}');
  });

  it('caches fingerprinted files for good and asks again for everything else', async () => {
    for (const asset of ['/assets/index-AbC123.js', '/assets/tiny-XyZ789.css']) {
      expect((await get(asset, { 'accept-encoding': 'br' })).headers['cache-control'], asset).toBe('public, max-age=31536000, immutable');
    }
    expect((await get('/robots.txt')).headers['cache-control']).toBe('no-cache');
    for (const pathname of ['/sign-in', '/signed-out']) {
      expect((await get(pathname)).headers['cache-control'], pathname).toBe('no-cache');
    }
  });

  it('sends the pages compressed too, the sign-in page its own', async () => {
    const signIn = await get('/sign-in?rd=%2Faccount', { 'accept-encoding': 'br, gzip' });
    expect(signIn.status).toBe(200);
    expect(signIn.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(signIn.headers['content-encoding']).toBe('br');
    expect(signIn.headers.vary).toMatch(/accept-encoding/i);
    expect(decoded(signIn).toString()).toBe(page('Sign in'));
    const signedOut = await get('/signed-out', { 'accept-encoding': 'gzip' });
    expect(signedOut.headers['content-encoding']).toBe('gzip');
    expect(decoded(signedOut).toString()).toBe(page('Console'));
    const plain = await get('/signed-out');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(page('Console'));
  });

  it('publishes no source map, nor the compressed copies under their own names', async () => {
    // Threat: source disclosure — a map carries the whole front end's source, comments included.
    for (const pathname of ['/assets/index-AbC123.js.map', '/assets/index-AbC123.js.br', '/assets/index-AbC123.js.gz', '/sign-in.html.br']) {
      const answer = await get(pathname, { 'accept-encoding': 'br, gzip' });
      expect(answer.status, pathname).toBe(404);
      expect(answer.body.toString(), pathname).not.toContain('secret');
    }
  });
});
