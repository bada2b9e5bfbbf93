import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_ORGANIZATION } from '../../../src/accounts/admission.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';

/**
 * Forward-auth against hostile requests: what the check judges must be what the proxy will do. Each
 * case sends what a client can make a proxy (nginx auth_request, Caddy forward_auth, Traefik
 * forwardAuth) pass on — the client's own headers travel with the check — to the real server on
 * loopback, through the hot path. The same threats are run through the real nginx and Caddy configs
 * in e2e/forward-auth.spec.ts.
 */

let gatehouse: RunningGatehouse;
let port = 0;
let whoami = '';
let vault = '';
/** bob's app-host tokens: whoami lets him in, vault does not. */
const cookieOf: Record<string, string> = {};

beforeAll(async () => {
  port = await freePort();
  whoami = `http://whoami.localhost:${port}`;
  vault = `http://vault.localhost:${port}`;
  gatehouse = await startGatehouse({
    port,
    trustedProxies: ['127.0.0.1/8'],
    session: { claimsRefreshInterval: '1d' },
    // bob's provider (nobody signs in through it here: sessions are made through the stores below).
    providers: [{ id: 'corp', name: 'Corp', issuer: 'http://127.0.0.1:9', clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      { id: 'whoami', name: 'Whoami', publicUrl: whoami, upstream: 'http://127.0.0.1:9', publicPaths: ['/public/*', '/healthz', '/static/*'], corsPreflight: true, policy: { allow: [{ emails: ['bob@example.com'] }] } },
      { id: 'vault', name: 'Vault', publicUrl: vault, upstream: 'http://127.0.0.1:9', policy: { allow: [{ emails: ['alice@example.com'] }] } },
    ],
  });
  // A signed-in bob, made through the real stores (the sign-in itself is tested elsewhere).
  const { accounts, sessions, appSessions } = gatehouse.services;
  const provider = { id: 'corp', name: 'Corp', allowedDomains: [], createUsers: true, trustEmail: false };
  const profile = { subject: 'bob', email: 'bob@example.com', emailVerified: true, name: 'Bob', picture: undefined, groups: [], sid: undefined, extra: {} };
  const { user, identity } = await accounts.signIn(provider, profile, OPEN_ORGANIZATION);
  const { session } = await sessions.create({ userId: user.id, identityId: identity.id, providerId: 'corp' });
  cookieOf.whoami = `gatehouse_app=${await appSessions.create(session.id, 'whoami', whoami)}`;
  cookieOf.vault = `gatehouse_app=${await appSessions.create(session.id, 'vault', vault)}`;
});

afterAll(async () => {
  await gatehouse?.close();
});

/** A check as a proxy sends it: its own X-Forwarded-* describing the request, plus the client's headers. */
const check = (appId: string | undefined, forwarded: { host: string; uri: string; method?: string }, client: Record<string, string> = {}, mode = 'auth') =>
  fetch(`${gatehouse.url}/.gatehouse/${mode}${appId === undefined ? '' : `/${appId}`}`, {
    headers: {
      ...client,
      'x-forwarded-proto': 'http',
      'x-forwarded-host': forwarded.host,
      'x-forwarded-uri': forwarded.uri,
      'x-forwarded-method': forwarded.method ?? 'GET',
    },
    redirect: 'manual',
  });

const host = (origin: string) => new URL(origin).host;

describe('the check is the one for the path the app will resolve', () => {
  it('allows what is public, and only that', async () => {
    expect((await check('whoami', { host: host(whoami), uri: '/public/a' })).status).toBe(200);
    expect((await check('whoami', { host: host(whoami), uri: '/private' })).status).toBe(401);
    expect((await check('whoami', { host: host(whoami), uri: '/private' }, { cookie: cookieOf.whoami! })).status).toBe(200);
  });

  // Threat: public-path bypass through a comma. The URI was split at its first comma ("/static"
  // judged, public), while nginx and Caddy send the whole target to the app, which resolves
  // "/static,/../secret.txt" to "/secret.txt".
  it.each(['/static,/../secret.txt', '/healthz,/../secret.txt', '/public/a,/../../secret.txt', '/healthz,', '/public,/x'])('%s is judged whole', async (uri) => {
    expect((await check('whoami', { host: host(whoami), uri })).status).toBe(401);
  });

  // Threat: a second URI header. Node joins repeated headers with ", "; the proxy's own value and a
  // client's copy must never be read as a list whose first item decides.
  it('refuses a URI sent as two headers', async () => {
    const response = await fetch(`${gatehouse.url}/.gatehouse/auth/whoami`, {
      headers: [
        ['x-forwarded-proto', 'http'],
        ['x-forwarded-host', host(whoami)],
        ['x-forwarded-method', 'GET'],
        ['x-forwarded-uri', '/public/a'],
        ['x-forwarded-uri', '/secret.txt'],
      ],
    });
    expect(response.status).toBe(403);
  });

  // Threat: path confusion. Whatever an app may resolve differently from Gatehouse is never public.
  it.each([
    '/public/%2e%2e/secret.txt',
    '/public/..;/secret.txt',
    '/public;/../secret.txt',
    '/public/x/..%2fsecret.txt',
    '/public/%252e%252e/secret.txt',
    '/public/\uff0e\uff0e/secret.txt'.replace(/[^\x20-\x7e]/g, (c) => encodeURIComponent(c)),
    '/public/%E2%80%A4%E2%80%A4/secret.txt',
    '/public/%E3%80%82%E3%80%82/secret.txt',
    '/public/#/../secret.txt',
    '/public/a%00/../../secret.txt',
  ])('%s is not public', async (uri) => {
    expect([401, 403]).toContain((await check('whoami', { host: host(whoami), uri })).status);
  });
});

describe('the check is the one for the app the proxy block serves', () => {
  // Threat: the client's Host picks the policy. A proxy block for vault that also answers other Host
  // values (nginx's default server; Caddy, whose site matcher ignores the port) forwards the client's
  // Host; the check must still be vault's.
  it("refuses a forwarded host that is not the named app's", async () => {
    // bob with his whoami token, asking vault's block with whoami's Host.
    expect((await check('vault', { host: host(whoami), uri: '/private' }, { cookie: cookieOf.whoami! })).status).toBe(403);
    // No session: a path public on whoami is nothing on vault.
    expect((await check('vault', { host: host(whoami), uri: '/public/a' })).status).toBe(403);
    expect((await check('vault', { host: `vault.localhost:${port + 1}`, uri: '/' })).status).toBe(403);
    // Host spellings a proxy's name matching may accept (a trailing dot, no port, padding) are not the app's origin.
    for (const spelling of [`whoami.localhost.:${port}`, 'whoami.localhost', `whoami.localhost:${port}.`]) {
      expect((await check('whoami', { host: spelling, uri: '/public/a' })).status, spelling).toBe(403);
    }
    expect((await check('whoami', { host: `WHOAMI.localhost:${port}`, uri: '/public/a' })).status).toBe(200);
    // vault's own host: bob is signed in there but not allowed.
    expect((await check('vault', { host: host(vault), uri: '/' }, { cookie: cookieOf.vault! })).status).toBe(403);
    expect((await check('vault', { host: host(vault), uri: '/' })).status).toBe(401);
  });

  // Threat: a deployment that names no app falls back to the Host. It is refused instead.
  it.each(['auth', 'forward-auth'])('the bare /.gatehouse/%s names no app and is refused', async (mode) => {
    const response = await check(undefined, { host: host(whoami), uri: '/public/a' }, { accept: 'text/html' }, mode);
    expect(response.status).toBe(403);
    expect(response.headers.get('x-gatehouse-email')).toBe('');
  });

  it.each(['/.gatehouse/%61uth/whoami', '/.gatehou%73e/auth/whoami', '/.gatehouse/forward-%61uth'])('%s is no forward-auth check, but a 404', async (path) => {
    const response = await fetch(`${gatehouse.url}${path}`, {
      headers: { accept: 'application/json', 'x-forwarded-proto': 'http', 'x-forwarded-host': host(whoami), 'x-forwarded-uri': '/public/a', 'x-forwarded-method': 'GET' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it.each(['unknown', 'Whoami', 'whoami%2f', 'whoami/x', 'whoami?x=1'])('an auth URL naming %s is refused', async (appId) => {
    expect((await check(appId, { host: host(whoami), uri: '/public/a' })).status).toBe(403);
  });
});

describe('exactly one URI header, with no fallback', () => {
  // Threat: the client picks the URI. With a proxy that sends another header (or none), a client's
  // own X-Forwarded-Uri was read; and a client's X-Original-URL reaches the app, which may route by it.
  it.each([
    ['x-original-uri', '/secret.txt'],
    ['x-original-url', '/secret.txt'],
    ['x-rewrite-url', '/secret.txt'],
    ['x_original_url', '/secret.txt'],
    ['X-Original-Url', '/secret.txt'],
  ])('a public check carrying %s is refused', async (name, value) => {
    expect((await check('whoami', { host: host(whoami), uri: '/public/a' }, { [name]: value })).status).toBe(403);
  });

  it('a check without the configured URI header is refused, not judged as "/"', async () => {
    const response = await fetch(`${gatehouse.url}/.gatehouse/auth/whoami`, {
      headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': host(whoami), 'x-forwarded-method': 'GET', 'x-original-uri': '/public/a' },
    });
    expect(response.status).toBe(403);
  });
});

describe('CORS preflights', () => {
  // Threat: any OPTIONS request was let through unauthenticated on an app with corsPreflight, though
  // only a preflight (Origin and Access-Control-Request-Method) needs to be.
  it('only a real preflight passes unauthenticated', async () => {
    const preflight = { origin: 'https://spa.example', 'access-control-request-method': 'POST' };
    expect((await check('whoami', { host: host(whoami), uri: '/api/data', method: 'OPTIONS' }, preflight)).status).toBe(200);
    expect((await check('whoami', { host: host(whoami), uri: '/api/data', method: 'OPTIONS' })).status).toBe(401);
    expect((await check('whoami', { host: host(whoami), uri: '/api/data', method: 'OPTIONS' }, { origin: 'https://spa.example' })).status).toBe(401);
    // Methods are case-sensitive (RFC 9110 §9.1): "options" is not OPTIONS, and is not upper-cased into one.
    expect((await check('whoami', { host: host(whoami), uri: '/api/data', method: 'options' }, preflight)).status).toBe(401);
  });
});

describe('an untrusted peer', () => {
  it('is never believed, whatever it names', async () => {
    const untrusted = await startGatehouse({
      // Said outright: left out, development mode (this harness's) would trust loopback, where the test is.
      trustedProxies: [],
      apps: [{ id: 'whoami', name: 'Whoami', publicUrl: 'http://whoami.localhost:1', upstream: 'http://127.0.0.1:9', publicPaths: ['/public/*'], policy: { allow: [{ anyUser: true }] } }],
    });
    try {
      const response = await fetch(`${untrusted.url}/.gatehouse/auth/whoami`, {
        headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'whoami.localhost:1', 'x-forwarded-uri': '/public/a', 'x-forwarded-method': 'GET' },
      });
      expect(response.status).toBe(403);
    } finally {
      await untrusted.close();
    }
  });
});
