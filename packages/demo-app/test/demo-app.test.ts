import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildDemoApp, type WhoamiReport } from '../src/index.js';
import { startDemoApp } from '../src/startDemoApp.js';

const ISSUER = 'http://localhost:4180';
const APP_HOST = 'whoami.localhost:4180';

describe('demo-app', () => {
  it('lists method, URL and headers, Gatehouse identity headers first, escaped', async () => {
    const app = buildDemoApp();
    const response = await app.inject({
      method: 'GET',
      url: '/some/path?x=1',
      headers: {
        host: APP_HOST,
        'x-gatehouse-user': 'u_123',
        'x-gatehouse-name': '<script>alert("x")</script>',
        'x-custom': 'a&b',
      },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    const html = response.body;
    expect(html).toContain('<title>whoami</title>');
    expect(html).toContain('<code>GET</code>');
    expect(html).toContain('<code>/some/path?x=1</code>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('<code>a&amp;b</code>');
    // Identity rows come first, highlighted, "not present" when missing.
    expect(html.indexOf('X-Gatehouse-Assertion')).toBeLessThan(html.indexOf('x-custom'));
    expect(html).toMatch(/<tr class="identity"><th scope="row">X-Gatehouse-Email<\/th><td><span class="missing">not present<\/span>/);
    expect(html).toMatch(/<tr class="identity"><th scope="row">X-Gatehouse-User<\/th><td><code>u_123<\/code>/);
    expect(html).toContain('Verification is off');
    await app.close();
  });

  it('answers JSON for Accept: application/json and for ?format=json', async () => {
    const app = buildDemoApp();
    const headers = {
      'x-gatehouse-user': 'u_123',
      'x-gatehouse-email': 'alice@example.com',
      'x-gatehouse-groups': 'staff, admins',
    };
    for (const request of [
      { url: '/api', headers: { ...headers, accept: 'application/json' } },
      { url: '/api?format=json', headers },
    ]) {
      const response = await app.inject({ method: 'POST', payload: 'ignored', ...request });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain('application/json');
      const report = response.json<WhoamiReport>();
      expect(report).toMatchObject({
        method: 'POST',
        url: request.url,
        identity: { user: 'u_123', email: 'alice@example.com', name: null, groups: ['staff', 'admins'] },
        assertion: { status: 'not_configured' },
      });
      expect(report.headers['x-gatehouse-email']).toBe('alice@example.com');
    }
    await app.close();
  });

  describe('with assertion verification', () => {
    let jwks: Server;
    let jwksUrl: string;
    let privateKey: CryptoKey;

    beforeAll(async () => {
      const pair = await generateKeyPair('ES256');
      privateKey = pair.privateKey;
      const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
      jwks = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
      });
      await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
      jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.gatehouse/jwks.json`;
    });

    afterAll(async () => {
      await new Promise((resolve) => jwks?.close(resolve));
    });

    function assertion(audience: string): Promise<string> {
      return new SignJWT({ email: 'alice@example.com', groups: ['staff'] })
        .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
        .setIssuer(ISSUER)
        .setSubject('u_123')
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    }

    it('verifies an assertion addressed to the request origin', async () => {
      const app = buildDemoApp({ jwksUrl, issuer: ISSUER });
      const response = await app.inject({
        url: '/?format=json',
        headers: { host: APP_HOST, 'x-gatehouse-assertion': await assertion(`http://${APP_HOST}`) },
      });
      expect(response.json<WhoamiReport>().assertion).toMatchObject({
        status: 'verified',
        claims: { iss: ISSUER, sub: 'u_123', aud: `http://${APP_HOST}`, email: 'alice@example.com' },
      });
      const page = await app.inject({
        url: '/',
        headers: { host: APP_HOST, 'x-gatehouse-assertion': await assertion(`http://${APP_HOST}`) },
      });
      expect(page.body).toContain('Assertion verified');
      await app.close();
    });

    it('rejects an assertion addressed to another app', async () => {
      const app = buildDemoApp({ jwksUrl, issuer: ISSUER });
      const response = await app.inject({
        url: '/?format=json',
        headers: { host: APP_HOST, 'x-gatehouse-assertion': await assertion('http://other.localhost:4180') },
      });
      const report = response.json<WhoamiReport>();
      expect(report.assertion.status).toBe('invalid');
      expect(report.assertion).toMatchObject({ reason: expect.stringContaining('"aud"') });
      await app.close();
    });

    it('takes the origin Gatehouse forwards as the audience, so an app without Preserve Host verifies', async () => {
      const app = buildDemoApp({ jwksUrl, issuer: ISSUER });
      const forwarded = { host: '127.0.0.1:4182', 'x-forwarded-host': 'reports.localhost:4180', 'x-forwarded-proto': 'http' };
      const response = await app.inject({
        url: '/?format=json',
        headers: { ...forwarded, 'x-gatehouse-assertion': await assertion('http://reports.localhost:4180') },
      });
      expect(response.json<WhoamiReport>().assertion).toMatchObject({ status: 'verified', claims: { aud: 'http://reports.localhost:4180' } });
      // Threat: a client elsewhere on the network names another app's host to replay its assertion; its forwarded headers are not believed.
      const remote = await app.inject({
        url: '/?format=json',
        remoteAddress: '203.0.113.9',
        headers: { ...forwarded, 'x-gatehouse-assertion': await assertion('http://reports.localhost:4180') },
      });
      expect(remote.json<WhoamiReport>().assertion).toMatchObject({ status: 'invalid', reason: expect.stringContaining('"aud"') });
      await app.close();
    });

    it('checks the configured audience instead of the Host header when given one', async () => {
      const app = buildDemoApp({ jwksUrl, issuer: ISSUER, audience: `http://${APP_HOST}` });
      const replayed = await app.inject({
        url: '/?format=json',
        headers: { host: 'other.localhost:4180', 'x-gatehouse-assertion': await assertion('http://other.localhost:4180') },
      });
      expect(replayed.json<WhoamiReport>().assertion.status).toBe('invalid');
      await app.close();
    });

    it('reports a request without an assertion', async () => {
      const app = buildDemoApp({ jwksUrl, issuer: ISSUER });
      const response = await app.inject({ url: '/?format=json', headers: { host: APP_HOST } });
      expect(response.json<WhoamiReport>().assertion).toEqual({ status: 'absent' });
      await app.close();
    });
  });

  it('outlives WebSocket clients that reset the connection right after asking', async () => {
    const demo = await startDemoApp({ port: 0, host: '127.0.0.1' });
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const { port } = new URL(demo.url);
      for (let attempt = 0; attempt < 20; attempt++) {
        for (const path of ['/ws', '/elsewhere']) {
          await new Promise<void>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1', () => {
              socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
              socket.resetAndDestroy();
              resolve();
            });
            socket.on('error', () => resolve());
          });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(uncaught).toEqual([]);
      expect((await fetch(`${demo.url}/?format=json`)).status).toBe(200);
    } finally {
      process.off('uncaughtException', record);
      await demo.close();
    }
  });
});
