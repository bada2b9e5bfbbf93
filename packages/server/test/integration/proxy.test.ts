import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { inputValue, ScriptedBrowser } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';
import { startUpstream, type Upstream } from './support/upstream.js';

/**
 * Gatehouse as a reverse proxy and as a forward-auth endpoint, end to end over HTTP: the one-time
 * handshake to the app host, the policy, what the upstream receives, and every hostile variation.
 * The IdP is a controllable one (the sign-in itself is covered elsewhere); the upstream records what
 * arrives.
 */
let idp: HostileIdp;
let upstream: Upstream;
let gatehouse: RunningGatehouse;
let port: number;
let app: string;
let closed: string;
let tokens: string;
let otherTokens: string;
let down: string;
let elsewhere: string;
let hangsUp: Server;

beforeAll(async () => {
  idp = await startHostileIdp('gatehouse');
  upstream = await startUpstream();
  port = await freePort();
  app = `http://echo.localhost:${port}`;
  closed = `http://closed.localhost:${port}`;
  tokens = `http://tokens.localhost:${port}`;
  otherTokens = `http://other-tokens.localhost:${port}`;
  down = `http://down.localhost:${port}`;
  elsewhere = `http://elsewhere.localhost:${port}`;
  // An upstream that hangs up on every connection (a port nobody listens on could be taken by another suite).
  hangsUp = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => hangsUp.listen(0, '127.0.0.1', resolve));
  const hangsUpPort = (hangsUp.address() as AddressInfo).port;
  gatehouse = await startGatehouse({
    port,
    trustedProxies: ['127.0.0.1/8'],
    // Short, so a test can see the hot path still record activity (sliding the idle expiry).
    session: { touchInterval: '1s' },
    providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      { id: 'echo', name: 'Echo', publicUrl: app, upstream: upstream.url, websockets: true, publicPaths: ['/public/*', '/health'], corsPreflight: true, policy: { allow: [{ emails: ['mallory@example.com'] }] } },
      { id: 'closed', name: 'Closed app', publicUrl: closed, upstream: upstream.url, policy: { allow: [{ groups: ['admins'] }] } },
      { id: 'tokens', name: 'Token app', publicUrl: tokens, upstream: upstream.url, passAccessToken: ['idp'], policy: { allow: [{ anyUser: true }] } },
      // Takes the tokens of another provider only: a session of 'idp' brings it none.
      { id: 'other-tokens', name: 'Other token app', publicUrl: otherTokens, upstream: upstream.url, passAccessToken: ['github'], policy: { allow: [{ anyUser: true }] } },
      { id: 'down', name: 'Down app', publicUrl: down, upstream: `http://127.0.0.1:${hangsUpPort}`, websockets: true, publicPaths: ['/reports', '/api/*'], policy: { allow: [{ anyUser: true }] } },
      // Served by nginx or Caddy, which ask Gatehouse about it: no upstream of Gatehouse's own.
      { id: 'elsewhere', name: 'Served elsewhere', publicUrl: elsewhere, websockets: true, publicPaths: ['/public/*'], policy: { allow: [{ anyUser: true }] } },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await upstream?.close();
  await idp?.close();
  hangsUp?.close();
});

const hosts = () => ['echo.localhost', 'closed.localhost', 'tokens.localhost', 'other-tokens.localhost', 'down.localhost', 'elsewhere.localhost', 'live.localhost'];

/** The id of the portal session a browser is signed in with. */
const sessionIdOf = async (browser: ScriptedBrowser) => JSON.parse((await browser.request(`${gatehouse.url}/api/session`)).body).session.id as string;

/** A browser signed in at the portal and, through the handshake, at `appOrigin`. */
async function signedInAt(appOrigin: string, path = '/'): Promise<{ browser: ScriptedBrowser; landing: ReturnType<ScriptedBrowser['request']> extends Promise<infer H> ? H : never }> {
  const browser = new ScriptedBrowser(hosts());
  const first = await browser.request(`${appOrigin}${path}`, { headers: { accept: 'text/html' } });
  expect(first.status).toBe(302);
  let { hop } = await browser.follow(first);
  // Signed out at the portal: the person clicks "Sign in with Test IdP" on /sign-in?rd=<app URL>.
  const signIn = new URL(hop.url);
  if (signIn.pathname === '/sign-in') {
    const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/idp?rd=${encodeURIComponent(signIn.searchParams.get('rd')!)}`);
    ({ hop } = await browser.follow(start));
  }
  return { browser, landing: hop };
}

/** A raw HTTP/1.1 exchange, for requests fetch() will not make (Upgrade headers on a plain GET). */
function fetchRaw(path: string, headers: Record<string, string>): Promise<string> {
  return exchangeRaw(`GET ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
}

/** Writes `request` as it is on a new connection and resolves with everything that comes back. */
function exchangeRaw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      resolve(data);
    }, 2000);
  });
}

/** Writes `request` on a new connection and resets the connection at once (TCP RST), as a client that gives up may. */
function writeThenReset(request: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
      socket.resetAndDestroy();
      resolve();
    });
    socket.on('error', () => resolve());
  });
}

const json = (body: string) => JSON.parse(body) as { headers: Record<string, string>; url: string; bodyLength: number; method: string };

describe('reverse proxy', () => {
  it('a signed-out browser goes through sign-in and the handshake back to the original URL', async () => {
    const { browser, landing } = await signedInAt(app, '/deep/page?q=1');
    expect(landing.url).toBe(`${app}/deep/page?q=1`);
    expect(landing.status).toBe(200);
    expect(json(landing.body).url).toBe('/deep/page?q=1');
    // The app host got its own host-only cookie, distinct from the portal's.
    const appCookie = browser.cookie('echo.localhost', 'gatehouse_app');
    expect(appCookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(appCookie).not.toBe(browser.cookie('localhost', 'gatehouse_session'));
    expect(browser.cookieAttributes('echo.localhost', 'gatehouse_app')).toMatch(/HttpOnly/i);
    expect(browser.cookieAttributes('echo.localhost', 'gatehouse_app')).toMatch(/SameSite=Lax/i);
    expect(browser.cookieAttributes('echo.localhost', 'gatehouse_app')).not.toMatch(/Domain=/i);
  });

  it('API-style requests get 401 problem+json, never a redirect', async () => {
    const browser = new ScriptedBrowser(hosts());
    const api = await browser.request(`${app}/api/data`, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const post = await browser.request(`${app}/form`, { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' } });
    expect(post.status).toBe(401);
    expect(upstream.last?.url).not.toBe('/form');
  });

  it('the upstream receives the identity, never Gatehouse cookies, and an assertion it can verify', async () => {
    const { browser } = await signedInAt(app);
    browser.setCookie('echo.localhost', 'theme', 'dark');
    const echoed = json((await browser.request(`${app}/whoami`)).body);
    expect(echoed.headers['x-gatehouse-email']).toBe('mallory@example.com');
    expect(echoed.headers['x-gatehouse-user']).toMatch(/^[0-9a-f-]{36}$/);
    expect(echoed.headers['x-gatehouse-groups']).toBe('');
    expect(echoed.headers.cookie).toBe('theme=dark');
    expect(echoed.headers['x-forwarded-host']).toBe(`echo.localhost:${port}`);
    expect(echoed.headers['x-forwarded-proto']).toBe('http');
    const jwks = createLocalJWKSet((await (await fetch(`${gatehouse.url}/.gatehouse/jwks.json`)).json()) as JSONWebKeySet);
    const { payload, protectedHeader } = await jwtVerify(echoed.headers['x-gatehouse-assertion']!, jwks, { issuer: gatehouse.url, audience: app });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: echoed.headers['x-gatehouse-user'], email: 'mallory@example.com' });
    expect(payload.exp! - payload.iat!).toBe(300);
    // The same keys are published on the app host too.
    const appJwks = await browser.request(`${app}/.gatehouse/jwks.json`);
    expect(JSON.parse(appJwks.body)).toEqual(await (await fetch(`${gatehouse.url}/.gatehouse/jwks.json`)).json());
  });

  // Requests answered without waiting (cached session, reused decision) must still slide the session.
  it('proxied requests keep recording activity once per touch interval', async () => {
    const { browser } = await signedInAt(app);
    const lastSeen = async () => {
      const rows = await gatehouse.services.database.db.selectFrom('sessions').select(['last_seen_at']).where('revoked_at', 'is', null).orderBy('created_at', 'desc').limit(1).execute();
      return rows[0]!.last_seen_at;
    };
    expect((await browser.request(`${app}/a`)).status).toBe(200);
    const before = await lastSeen();
    for (let i = 0; i < 5; i++) expect((await browser.request(`${app}/b`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await browser.request(`${app}/c`)).status).toBe(200);
    // Activity is written in batches, about once a second (SessionStore.touch).
    await expect.poll(lastSeen, { timeout: 5_000 }).toBeGreaterThan(before);
  });

  // Threat: header spoofing. A client sends its own identity headers hoping the app believes them.
  it.each(['X-Gatehouse-Email', 'x-gatehouse-email', 'X-GATEHOUSE-EMAIL', 'X_Gatehouse_Email', 'x_gatehouse_email', 'X-Gatehouse_Email', 'X-Gatehouse-Assertion', 'X-Gatehouse-Anything'])(
    'incoming %s is removed',
    async (name) => {
      const { browser } = await signedInAt(app);
      const echoed = json((await browser.request(`${app}/`, { headers: { [name]: 'evil@example.com' } })).body);
      expect(Object.entries(echoed.headers).filter(([, value]) => String(value).includes('evil'))).toEqual([]);
      // Public paths carry no identity at all, and still no spoofed one.
      const open = json((await new ScriptedBrowser(hosts()).request(`${app}/public/x`, { headers: { [name]: 'evil@example.com' } })).body);
      expect(JSON.stringify(open.headers)).not.toContain('evil');
    },
  );

  it('passes the IdP access token only to apps that ask for that provider’s, never a client-supplied one', async () => {
    const { browser } = await signedInAt(tokens);
    const toTokenApp = json((await browser.request(`${tokens}/`, { headers: { authorization: 'Bearer forged' } })).body);
    expect(toTokenApp.headers.authorization).toBe('Bearer at');
    // Threat: every provider's access token handed to any app that takes tokens. This app names another
    // provider: a session signed in through 'idp' brings it no token, nor the client's own.
    const { browser: onOther } = await signedInAt(otherTokens);
    const toOtherApp = json((await onOther.request(`${otherTokens}/`, { headers: { authorization: 'Bearer forged' } })).body);
    expect(toOtherApp.headers.authorization).toBeUndefined();
    expect(JSON.stringify(toOtherApp.headers)).not.toContain('Bearer at');
    const { browser: onEcho } = await signedInAt(app);
    const toEcho = json((await onEcho.request(`${app}/`, { headers: { authorization: 'Basic app-own' } })).body);
    expect(toEcho.headers.authorization).toBe('Basic app-own');
    // The access token is stored encrypted, and never shown by the API.
    const rows = await gatehouse.services.database.db.selectFrom('sessions').select(['access_token_enc']).execute();
    expect(rows.some((row) => row.access_token_enc?.startsWith('v1.'))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain('"at"');
  });

  it('an upstream cannot set or clear Gatehouse cookies', async () => {
    const { browser } = await signedInAt(app);
    const before = browser.cookie('echo.localhost', 'gatehouse_app');
    const response = await browser.request(`${app}/set-cookie`);
    expect(response.headers.getSetCookie()).toEqual(['theme=dark; Path=/']);
    expect(browser.cookie('echo.localhost', 'gatehouse_app')).toBe(before);
  });

  it('streams request bodies to the upstream', async () => {
    const { browser } = await signedInAt(app);
    const body = 'x'.repeat(1_000_000);
    const echoed = json((await browser.request(`${app}/upload`, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } })).body);
    expect(echoed).toMatchObject({ method: 'PUT', url: '/upload', bodyLength: 1_000_000 });
  });

  it('an upstream that cannot be reached is a 502 page or problem naming the app, with a reference', async () => {
    const browser = new ScriptedBrowser(hosts());
    const page = await browser.request(`${down}/reports`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(502);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.body).toContain('Down app');
    expect(page.body).toMatch(/upstream_unavailable/);
    const api = await browser.request(`${down}/api/items`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{}' });
    expect(api.status).toBe(502);
    expect(api.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(api.body)).toMatchObject({ code: 'upstream_unavailable', status: 502, reference: expect.stringMatching(/^[0-9a-f]{12}$/) });
  });

  it('an app without an upstream is forwarded nowhere: a 421 page or problem naming it, its own paths still answer', async () => {
    const browser = new ScriptedBrowser(hosts());
    const page = await browser.request(`${elsewhere}/public/x`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(421);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.body).toContain('Served elsewhere');
    expect(page.body).toMatch(/no_upstream/);
    const api = await browser.request(`${elsewhere}/public/api`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: '{}' });
    expect(api.status).toBe(421);
    expect(JSON.parse(api.body)).toMatchObject({ code: 'no_upstream', status: 421, reference: expect.stringMatching(/^[0-9a-f]{12}$/) });
    // Signed in and allowed, the same: nothing to forward to.
    const { landing } = await signedInAt(elsewhere, '/reports');
    expect(landing.status).toBe(421);
    // Gatehouse's own paths on its host answer as for any app: the keys, and forward-auth for its proxy.
    expect((await browser.request(`${elsewhere}/.gatehouse/jwks.json`)).status).toBe(200);
    const check = await fetch(`${gatehouse.url}/.gatehouse/auth/elsewhere`, {
      headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': `elsewhere.localhost:${port}`, 'x-forwarded-uri': '/public/x', 'x-forwarded-method': 'GET' },
    });
    expect(check.status).toBe(200);
  });

  it('denies with a page naming the user and the app; API clients get problem+json', async () => {
    const { browser } = await signedInAt(app);
    const first = await browser.request(`${closed}/`, { headers: { accept: 'text/html' } });
    const { hop } = await browser.follow(first);
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('You are signed in as <strong>mallory@example.com</strong>, who may not open <strong>Closed app</strong>.');
    expect(hop.body).toContain('Switch account');
    expect(hop.body).toMatch(/action="\/\.gatehouse\/sign-out"/);
    const api = await browser.request(`${closed}/api`, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(403);
    expect(JSON.parse(api.body).code).toBe('access_denied');
  });

  it('"Sign out" on the denied page ends the session (CSRF-checked)', async () => {
    const { browser, landing } = await signedInAt(closed);
    expect(landing.status).toBe(403);
    const token = inputValue(landing.body, 'csrf_token')!;
    const forged = await browser.request(`${closed}/.gatehouse/sign-out`, { form: { csrf_token: token }, headers: { origin: 'http://evil.localhost' } });
    expect(forged.status).toBe(403);
    const signOut = await browser.request(`${closed}/.gatehouse/sign-out`, { form: { csrf_token: token }, headers: { origin: closed } });
    expect(signOut.status).toBe(303);
    expect((await browser.request(`${gatehouse.url}/api/session`)).status).toBe(401);
  });

  it('signing out on the portal ends the app host session at its next request', async () => {
    const { browser } = await signedInAt(app);
    const { csrfToken } = JSON.parse((await browser.request(`${gatehouse.url}/api/csrf`)).body);
    await browser.request(`${gatehouse.url}/.gatehouse/sign-out`, { form: { csrf_token: csrfToken }, headers: { origin: gatehouse.url } });
    const after = await browser.request(`${app}/`, { headers: { accept: 'text/html' } });
    expect(after.status).toBe(302);
    expect(after.headers.get('location')).toMatch(/^\/\.gatehouse\/start\?rd=/);
  });
});

describe('the handshake', () => {
  /** Starts the handshake and stops before the browser reaches the app host's /complete. */
  async function completeUrl(browser: ScriptedBrowser): Promise<URL> {
    const start = await browser.request(`${app}/.gatehouse/start?rd=${encodeURIComponent(`${app}/x`)}`);
    const { stoppedAt } = await browser.follow(start, (url) => url.pathname === '/.gatehouse/complete');
    return stoppedAt!;
  }

  it('a code works once, only with the state cookie of the browser that started it', async () => {
    const { browser } = await signedInAt(app);
    const complete = await completeUrl(browser);
    expect(complete.origin).toBe(app);

    // Threat: a leaked /complete URL. Another browser has no matching state cookie.
    const thief = new ScriptedBrowser(hosts());
    expect((await thief.request(complete.href)).status).toBe(400);

    // The code was spent by the failed attempt? No: state is checked before the code is consumed.
    const ok = await browser.request(complete.href);
    expect(ok.status).toBe(303);
    // Replay of the same URL: refused.
    browser.setCookie('echo.localhost', 'gatehouse_app_state', complete.searchParams.get('state')!);
    expect((await browser.request(complete.href)).status).toBe(400);
  });

  it('a code is bound to the app origin it was issued for', async () => {
    const { browser } = await signedInAt(app);
    const complete = await completeUrl(browser);
    const elsewhere = new URL(complete.href.replace(app, closed));
    browser.setCookie('closed.localhost', 'gatehouse_app_state', complete.searchParams.get('state')!);
    expect((await browser.request(elsewhere.href)).status).toBe(400);
  });

  it('return-to stays on the app: another origin falls back to the app root', async () => {
    const { browser } = await signedInAt(app);
    const start = await browser.request(`${app}/.gatehouse/start?rd=${encodeURIComponent('https://evil.example/')}`);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(gatehouse.url);
    expect(authorize.searchParams.get('rd')).toBe(`${app}/`);
  });
});

describe('public paths match on the normalised path only', () => {
  it.each([
    ['/public/file.txt', true],
    ['/public', true],
    ['/health', true],
    ['/health?debug=1', true],
    ['/healthz', false],
    ['/public/../secret', false],
    ['/public/%2E%2E/secret', false],
    ['/public%2F..%2Fsecret', false],
    ['/public/..%2Fsecret', false],
    ['/public/..;/secret', false],
    ['/public/%252E%252E/secret', false],
    ['/public/..%09/secret', false],
    ['/secret?next=/public/x', false],
    ['/secret#/public/x', false],
    ['/publicity', false],
  ])('%s → public: %s', async (path, isPublic) => {
    const response = await new ScriptedBrowser(hosts()).request(`${app}${path}`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(isPublic ? 200 : 401);
  });

  it('CORS preflights pass through unauthenticated when the app asks for it', async () => {
    const response = await new ScriptedBrowser(hosts()).request(`${app}/api/data`, {
      method: 'OPTIONS',
      headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(200);
    expect(upstream.last?.method).toBe('OPTIONS');
    expect(upstream.last?.headers['x-gatehouse-email']).toBeUndefined();
  });
});

describe('a request with more than one Host header', () => {
  // RFC 9112 §3.2: a 400. A proxy in front might route on one line while Gatehouse decided on the other.
  const twoHosts = (path: string, first: string, second: string, extra = '') =>
    exchangeRaw(`GET ${path} HTTP/1.1\r\nHost: ${first}:${port}\r\nhost: ${second}:${port}\r\nAccept: application/json\r\n${extra}Connection: close\r\n\r\n`);

  it('is a 400 problem, for an app, the portal and forward-auth alike, and nothing reaches the upstream', async () => {
    const before = upstream.last;
    for (const answer of [
      await twoHosts('/public/x', 'echo.localhost', 'closed.localhost'),
      await twoHosts('/public/x', 'closed.localhost', 'echo.localhost'),
      await twoHosts('/api/session', 'localhost', 'echo.localhost'),
      await twoHosts('/.gatehouse/auth/echo', 'localhost', 'localhost', 'X-Forwarded-Proto: http\r\nX-Forwarded-Host: echo.localhost:' + port + '\r\nX-Forwarded-Uri: /public/x\r\n'),
    ]) {
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/content-type: application\/problem\+json/i);
      expect(answer).toContain('"code":"bad_request"');
    }
    expect(upstream.last).toBe(before);
  });

  it('is a 400 on a WebSocket upgrade too, never proxied', async () => {
    const answer = await twoHosts('/public/ws', 'echo.localhost', 'echo.localhost', 'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"bad_request"');
  });

  it('none at all is a 400 in HTTP/1.1, on a WebSocket upgrade too; HTTP/1.0 needs none', async () => {
    const plain = await exchangeRaw('GET /api/session HTTP/1.1\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    expect(plain).toMatch(/^HTTP\/1\.1 400 /);
    expect(plain).toContain('"code":"bad_request"');
    expect(plain).toContain('no Host header');
    const upgrade = await exchangeRaw('GET /ws HTTP/1.1\r\nAccept: application/json\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    expect(upgrade).toMatch(/^HTTP\/1\.1 400 /);
    expect(upgrade).toContain('"code":"bad_request"');
    expect(await exchangeRaw('GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('one Host header, in any case, is fine', async () => {
    const answer = await exchangeRaw(`GET /public/x HTTP/1.1\r\nHOST: echo.localhost:${port}\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('requests the HTTP parser refuses', () => {
  // No request to negotiate with: problem+json, with the catalogue code and a reference, then the connection closes.
  const problemOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string; status: number; reference: string };

  it('headers over the size limit are a 431 request_too_large', async () => {
    const answer = await exchangeRaw(`GET /public/x HTTP/1.1\r\nHost: echo.localhost:${port}\r\nCookie: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(problemOf(answer)).toMatchObject({ code: 'request_too_large', status: 431, reference: expect.stringMatching(/^[0-9a-f]{12}$/) });
  });

  it('a request that could be smuggled (Transfer-Encoding and Content-Length) is a 400 bad_request, never forwarded', async () => {
    const before = upstream.last;
    const answer = await exchangeRaw(`POST /public/x HTTP/1.1\r\nHost: echo.localhost:${port}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /public/y HTTP/1.1\r\nHost: echo.localhost:${port}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(problemOf(answer)).toMatchObject({ code: 'bad_request', status: 400 });
    expect(upstream.last).toBe(before);
  });
});

describe('answers that last', () => {
  /** A GET on echo's /stream (an answer that never ends), resolved once the first chunk is in. */
  function openStream(browser: ScriptedBrowser): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = httpGet(
        { host: '127.0.0.1', port, path: '/stream', headers: { host: `echo.localhost:${port}`, cookie: browser.cookieHeader('echo.localhost'), accept: 'text/event-stream' } },
        (response) => (response.statusCode === 200 ? response.once('data', () => resolve(response)) : reject(new Error(`status ${response.statusCode}`))),
      );
      request.once('error', reject);
    });
  }
  const endOf = (response: IncomingMessage) =>
    new Promise<string>((resolve) => {
      response.once('end', () => resolve('ended'));
      response.once('aborted', () => resolve('cut'));
      response.once('error', () => resolve('cut'));
    });

  it('an event stream is cut when its session is revoked, not left streaming', async () => {
    const { browser } = await signedInAt(app);
    const stream = await openStream(browser);
    const ended = endOf(stream);
    const sessionId = await sessionIdOf(browser);
    await gatehouse.services.sessions.revoke(sessionId, 'revoked-by-admin');
    expect(await ended).toBe('cut');
    // Reconnecting, as an EventSource does, is refused.
    await expect(openStream(browser)).rejects.toThrow('status 401');
  });

  it('an event stream is cut once a later check finds its session expired', async () => {
    const { browser } = await signedInAt(app);
    const stream = await openStream(browser);
    const ended = endOf(stream);
    const sessionId = await sessionIdOf(browser);
    await gatehouse.services.database.db.updateTable('sessions').set({ absolute_expires_at: Date.now() - 1 }).where('id', '=', sessionId).execute();
    gatehouse.services.resolver.invalidate(sessionId);
    // Checked once per touch interval: 1 s in this suite.
    expect(await ended).toBe('cut');
  });
});

describe('WebSockets', () => {
  function connect(browser: ScriptedBrowser, host = 'echo.localhost'): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `${host}:${port}`, cookie: browser.cookieHeader(host) } });
      socket.once('open', () => resolve(socket));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
      socket.once('error', reject);
    });
  }

  it('echoes through the proxy with the identity, and a revocation closes the socket', async () => {
    const { browser } = await signedInAt(app);
    const socket = await connect(browser);
    const reply = await new Promise<string>((resolve) => {
      socket.once('message', (data) => resolve(data.toString()));
      socket.send('hello');
    });
    expect(reply).toBe('echo from mallory@example.com: hello');

    const closedWith = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    const sessionId = await sessionIdOf(browser);
    await gatehouse.services.sessions.revoke(sessionId, 'revoked-by-admin');
    expect(await closedWith).toBe(1008);
  });

  const closeOf = (socket: WebSocket) => new Promise<[number, string]>((resolve) => socket.once('close', (code, reason) => resolve([code, reason.toString()])));

  it('closes the upstream side first on a revocation: a client that ignores the close gets nothing more through', async () => {
    const { browser } = await signedInAt(app);
    const socket = await connect(browser);
    await new Promise((resolve) => {
      socket.once('message', resolve);
      socket.send('hello');
    });
    const open = upstream.openWebSockets();
    const arrived = upstream.webSocketMessages();
    // The client stops reading, so it never sees the closing handshake, and goes on sending.
    socket.pause();
    await gatehouse.services.sessions.revoke(await sessionIdOf(browser), 'revoked-by-admin');
    for (let i = 0; i < 5; i++) socket.send(`still here ${i}`);
    await expect.poll(() => upstream.openWebSockets()).toBe(open - 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(upstream.webSocketMessages()).toBe(arrived);
    // Reading again, it finds the close waiting for it.
    const closed = closeOf(socket);
    socket.resume();
    expect(await closed).toEqual([1008, 'session ended']);
  });

  it('checks open sockets again while they are open: one whose session has expired is closed', async () => {
    const { browser } = await signedInAt(app);
    const socket = await connect(browser);
    const sessionId = await sessionIdOf(browser);
    const closed = closeOf(socket);
    await gatehouse.services.database.db.updateTable('sessions').set({ absolute_expires_at: Date.now() - 1 }).where('id', '=', sessionId).execute();
    gatehouse.services.resolver.invalidate(sessionId);
    // Checked once per touch interval: 1 s in this suite.
    expect(await closed).toEqual([1008, 'session ended']);
  });

  it('closes open sockets when the console changes their app so that they are no longer allowed, or removes it', async () => {
    const live = `http://live.localhost:${port}`;
    const definition = { id: 'live', name: 'Live', publicUrl: live, upstream: upstream.url, websockets: true, policy: { allow: [{ anyUser: true }] } };
    await gatehouse.services.appStore.create(definition);
    try {
      const { browser } = await signedInAt(live);
      const denied = closeOf(await connect(browser, 'live.localhost'));
      await gatehouse.services.appStore.update('live', { ...definition, policy: { allow: [{ emails: ['someone-else@example.com'] }] } });
      expect(await denied).toEqual([1008, 'access denied']);

      await gatehouse.services.appStore.update('live', definition);
      const removed = closeOf(await connect(browser, 'live.localhost'));
      await gatehouse.services.appStore.remove('live');
      expect(await removed).toEqual([1001, 'the app was removed']);
    } finally {
      if (gatehouse.services.apps.get('live')) await gatehouse.services.appStore.remove('live');
    }
  });

  it('tells open sockets Gatehouse is going away when it shuts down, and does not wait for them', async () => {
    // A Gatehouse of its own, with a public WebSocket path: no sign-in needed.
    const own = await startGatehouse({
      apps: [{ id: 'pub', name: 'Public socket', publicUrl: 'http://pub.localhost:8443', upstream: upstream.url, websockets: true, publicPaths: ['/ws'], policy: { allow: [{ anyUser: true }] } }],
    });
    const socket = await new Promise<WebSocket>((resolve, reject) => {
      const opened = new WebSocket(`ws://127.0.0.1:${own.port}/ws`, { headers: { host: 'pub.localhost:8443' } });
      opened.once('open', () => resolve(opened));
      opened.once('error', reject);
    });
    const closed = closeOf(socket);
    await own.close();
    expect(await closed).toEqual([1001, 'Gatehouse is shutting down']);
  });

  it('stops reading from the upstream while a client is not reading, instead of buffering without bound', async () => {
    const { browser } = await signedInAt(app);
    const socket = await connect(browser);
    let received = 0;
    socket.on('message', (data: Buffer) => (received += data.length));
    socket.pause();
    socket.send('flood 64');
    // 64 MiB from the upstream: far more than the sockets between can hold, so most of it must wait at
    // the upstream rather than in Gatehouse.
    await expect.poll(() => upstream.webSocketBacklog(), { timeout: 5000 }).toBeGreaterThan(32 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(upstream.webSocketBacklog()).toBeGreaterThan(32 * 1024 * 1024);
    // Reading again, the client gets every byte.
    socket.resume();
    await expect.poll(() => received, { timeout: 10_000 }).toBe(64 * 1024 * 1024);
    socket.close();
  });

  it('refuses an upgrade without a session', async () => {
    await expect(connect(new ScriptedBrowser(hosts()))).rejects.toThrow('upgrade refused: 401');
  });

  it('answers a refused upgrade with the catalogue code and a reference, and closes the connection', async () => {
    const upgrade = (host: string, path: string) =>
      exchangeRaw(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    const problem = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string; reference: string; status: number };
    for (const [host, path, status, code] of [
      ['echo.localhost', '/ws', 401, 'unauthenticated'],
      // WebSockets are off for this app.
      ['closed.localhost', '/ws', 404, 'not_found'],
      // A public path of an app whose upstream hangs up.
      ['down.localhost', '/api/ws', 502, 'upstream_unavailable'],
      // A public path of an app with no upstream at all.
      ['elsewhere.localhost', '/public/ws', 421, 'no_upstream'],
    ] as const) {
      const answer = await upgrade(host, path);
      expect(answer, host).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(problem(answer)).toMatchObject({ code, status, reference: expect.stringMatching(/^[0-9a-f]{12}$/) });
    }
  });

  it('refuses a request target that is not a path, so no URL naming another host is proxied under this one’s policy', async () => {
    const { browser } = await signedInAt(app);
    const cookie = browser.cookieHeader('echo.localhost');
    const before = upstream.last;
    for (const [target, extra] of [
      // Allowed on echo; the URL names the closed app, which an upstream serving both would answer for.
      [`http://closed.localhost:${port}/admin`, ''],
      [`http://echo.localhost:${port}/page`, ''],
      ['*', ''],
      [`http://closed.localhost:${port}/ws`, 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'],
    ] as const) {
      const answer = await exchangeRaw(`${target === '*' ? 'OPTIONS' : 'GET'} ${target} HTTP/1.1\r\nHost: echo.localhost:${port}\r\nCookie: ${cookie}\r\nAccept: application/json\r\n${extra || 'Connection: close\r\n'}\r\n`);
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('"code":"bad_request"');
      expect(answer).toContain('must be a path');
    }
    expect(upstream.last).toBe(before);
    // The portal too.
    expect(await exchangeRaw(`GET http://localhost:${port}/ HTTP/1.1\r\nHost: localhost:${port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('answers CONNECT with a catalogue 400 rather than dropping the connection', async () => {
    const answer = await exchangeRaw(`CONNECT echo.localhost:443 HTTP/1.1\r\nHost: echo.localhost:443\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"bad_request"');
    expect(answer).toContain('CONNECT is for forward proxies');
  });

  it('outlives clients that reset the connection right after asking for an upgrade', async () => {
    // Node hands an upgrade's socket over without an error listener: unguarded, the write of the
    // answer to a reset connection was an uncaught error, which ends a server process.
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      for (let attempt = 0; attempt < 20; attempt++) {
        // Refused (no session), and public (reaches the upstream first).
        for (const path of ['/ws', '/public/ws']) {
          await writeThenReset(`GET ${path} HTTP/1.1\r\nHost: echo.localhost:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(uncaught).toEqual([]);
      expect((await fetch(`${gatehouse.url}/healthz`)).status).toBe(200);
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('serves a request asking for another protocol (curl --http2’s h2c) as the plain request it also is, never tunnelled', async () => {
    const { browser } = await signedInAt(app);
    const h2c = (host: string, path: string, extra = '') =>
      exchangeRaw(
        `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nCookie: ${browser.cookieHeader(host)}\r\nAccept: application/json\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n${extra}\r\n`,
      );
    const allowed = await h2c('echo.localhost', '/page');
    expect(allowed).toMatch(/^HTTP\/1\.1 200 /);
    expect(upstream.last?.url).toBe('/page');
    expect(upstream.last?.headers.upgrade).toBeUndefined();
    expect(upstream.last?.headers['http2-settings']).toBeUndefined();
    expect(upstream.last?.headers.connection).not.toMatch(/upgrade/i);
    // An app without WebSockets, and one whose policy says no: the usual answers, not a refused upgrade.
    expect(await h2c('tokens.localhost', '/')).toMatch(/^HTTP\/1\.1 401 /);
    // A body cannot follow once Node has handed the connection over: a clear 400, never a hang.
    const withBody = await h2c('echo.localhost', '/page', 'Content-Length: 5\r\n');
    expect(withBody).toMatch(/^HTTP\/1\.1 400 /);
    expect(withBody).toContain('"code":"bad_request"');
  });

  it('lets the upstream go when the client’s own handshake is refused', async () => {
    const { browser } = await signedInAt(app);
    expect(upstream.openWebSockets()).toBe(0);
    // Allowed, so Gatehouse reaches the upstream first; then ws refuses the client's malformed key.
    const answer = await exchangeRaw(
      `GET /ws HTTP/1.1\r\nHost: echo.localhost:${port}\r\nCookie: ${browser.cookieHeader('echo.localhost')}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: not-a-key\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(() => upstream.openWebSockets(), { timeout: 2000 }).toBe(0);
  });
});

describe('forward-auth', () => {
  const forwarded = (host: string, uri = '/', extra: Record<string, string> = {}) => ({
    'x-forwarded-proto': 'http',
    'x-forwarded-host': host,
    'x-forwarded-uri': uri,
    'x-forwarded-method': 'GET',
    ...extra,
  });

  it('nginx auth_request: 200 with identity headers, 401 signed out, 403 denied or unknown host; never a redirect', async () => {
    const { browser } = await signedInAt(app);
    const cookie = browser.cookieHeader('echo.localhost');
    const allowed = await fetch(`${gatehouse.url}/.gatehouse/auth/echo`, { headers: { ...forwarded(`echo.localhost:${port}`), cookie } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('x-gatehouse-email')).toBe('mallory@example.com');
    expect(allowed.headers.get('x-gatehouse-assertion')).toMatch(/^eyJ/);

    const signedOut = await fetch(`${gatehouse.url}/.gatehouse/auth/echo`, { headers: { ...forwarded(`echo.localhost:${port}`), accept: 'text/html' }, redirect: 'manual' });
    expect(signedOut.status).toBe(401);
    // Every identity header is present (empty), so the proxy overwrites any client copies.
    for (const name of ['x-gatehouse-user', 'x-gatehouse-email', 'x-gatehouse-name', 'x-gatehouse-groups', 'x-gatehouse-assertion']) {
      expect(signedOut.headers.get(name)).toBe('');
    }
    // A cookie for one app host is nothing on another: 401 there, not a pass.
    const otherHost = await fetch(`${gatehouse.url}/.gatehouse/auth/closed`, { headers: { ...forwarded(`closed.localhost:${port}`), cookie } });
    expect(otherHost.status).toBe(401);
    const { browser: onClosed } = await signedInAt(closed);
    const denied = await fetch(`${gatehouse.url}/.gatehouse/auth/closed`, { headers: { ...forwarded(`closed.localhost:${port}`), cookie: onClosed.cookieHeader('closed.localhost') } });
    expect(denied.status).toBe(403);
    const unknown = await fetch(`${gatehouse.url}/.gatehouse/auth/echo`, { headers: { ...forwarded('elsewhere.example'), cookie } });
    expect(unknown.status).toBe(403);
    const publicPath = await fetch(`${gatehouse.url}/.gatehouse/auth/echo`, { headers: forwarded(`echo.localhost:${port}`, '/public/a') });
    expect(publicPath.status).toBe(200);
    expect(publicPath.headers.get('x-gatehouse-email')).toBe('');
  });

  it('Traefik/Caddy forward-auth: browsers are redirected to sign in on the app host, APIs get 401', async () => {
    const browserStyle = await fetch(`${gatehouse.url}/.gatehouse/forward-auth/echo`, {
      headers: { ...forwarded(`echo.localhost:${port}`, '/page?a=1'), accept: 'text/html' },
      redirect: 'manual',
    });
    expect(browserStyle.status).toBe(302);
    expect(browserStyle.headers.get('location')).toBe(`${app}/.gatehouse/start?rd=${encodeURIComponent(`${app}/page?a=1`)}`);
    const apiStyle = await fetch(`${gatehouse.url}/.gatehouse/forward-auth/echo`, { headers: { ...forwarded(`echo.localhost:${port}`), accept: 'application/json' } });
    expect(apiStyle.status).toBe(401);
  });

  it('works when the proxy keeps the app’s Host on the auth request (Caddy), or the client’s Upgrade header', async () => {
    const browser = new ScriptedBrowser(hosts());
    const viaAppHost = await browser.request(`${app}/.gatehouse/forward-auth/echo`, {
      headers: { ...forwarded(`echo.localhost:${port}`, '/x'), accept: 'text/html' },
    });
    expect(viaAppHost.status).toBe(302);
    const upgrade = await fetchRaw(`/.gatehouse/auth/echo`, { ...forwarded(`echo.localhost:${port}`), connection: 'Upgrade', upgrade: 'websocket', host: `localhost:${port}` });
    expect(upgrade).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('Traefik/Caddy: a denied browser gets the access-denied page, not an empty 403', async () => {
    const { browser: onClosed } = await signedInAt(closed);
    const denied = await fetch(`${gatehouse.url}/.gatehouse/forward-auth/closed`, {
      headers: { ...forwarded(`closed.localhost:${port}`, '/x'), accept: 'text/html', cookie: onClosed.cookieHeader('closed.localhost') },
    });
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain('who may not open <strong>Closed app</strong>');
  });

  it('passes a trusted proxy’s X-Forwarded-For on with the proxy added', async () => {
    // This instance trusts 127.0.0.0/8, where the test connects from.
    const hop = await new ScriptedBrowser(hosts()).request(`${app}/public/x`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(json(hop.body).headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
  });

  // Threat: forwarded-header spoofing. Without trusted proxies, X-Forwarded-* are never believed.
  it('forwarded headers from an untrusted peer are not believed', async () => {
    const untrustedPort = await freePort();
    const untrusted = await startGatehouse({
      port: untrustedPort,
      // Said outright: left out, development mode (this harness's) would trust loopback, where the test is.
      trustedProxies: [],
      providers: [{ id: 'idp', name: 'Test IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
      apps: [{ id: 'echo', name: 'Echo', publicUrl: `http://echo.example:${untrustedPort}`, upstream: upstream.url, publicPaths: ['/public/*'], policy: { allow: [{ anyUser: true }] } }],
    });
    try {
      const response = await fetch(`${untrusted.url}/.gatehouse/auth/echo`, { headers: forwarded(`echo.example:${untrustedPort}`, '/public/x') });
      expect(response.status).toBe(403);
      // Nor is X-Forwarded-For: the upstream sees the real peer, and only it.
      const browser = new ScriptedBrowser(['echo.example']);
      const hop = await browser.request(`http://echo.example:${untrusted.port}/public/x`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(json(hop.body).headers['x-forwarded-for']).toBe('127.0.0.1');
    } finally {
      await untrusted.close();
    }
  });
});
