import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashSecret } from '../../../src/sessions/sessionToken.js';
import { registeredRoutes } from '../support/routes.js';
import { open, post, raw, signIn, startSecurityRig, type SecurityRig, type SignedIn } from '../support/securityRig.js';

// Threat class: credentials in API answers — an ID, access or refresh token, a provider's client
// secret, a cookie or app token (or the hash that stands for one in the database), an encrypted token
// blob or a key, returned by some /api answer to an admin or a member, where a cross-site script, a
// browser extension or a log of API traffic would pick it up. Every GET route registered in Fastify is
// walked (so routes added later are covered too) as an admin and as a member, and every body is
// searched for the actual secret values and for keys named like a secret.

const CONSOLE_CLIENT_SECRET = 'console-provider-client-secret-5f2a9c1e';
/** An OpenID Connect client's secret from the configuration file (kept hashed by the registry). */
const CONFIG_OIDC_SECRET = 'config-oidc-client-secret-7d41b0c2e9f8a6d3';
let consoleOidcSecret = '';
let rig: SecurityRig;
let alice: SignedIn;
let bob: SignedIn;
const secrets = new Map<string, string>();
let testId: string;

beforeAll(async () => {
  // An app that signs people in with OpenID Connect alone, with a secret from the file.
  rig = await startSecurityRig({}, [
    { id: 'sso', name: 'SSO app', publicUrl: 'https://sso.example.com', guard: false, policy: { allow: [{ anyUser: true }] }, oidc: { redirectUris: ['https://sso.example.com/callback'], secrets: [CONFIG_OIDC_SECRET] } },
  ]);
  alice = await signIn(rig, 'dev', 'alice@example.com', 'alice');
  bob = await signIn(rig, 'dev', 'bob@example.com', 'bob');
  for (const who of [alice, bob]) {
    expect((await open(who.browser, `${rig.apps.any}/`)).status).toBe(200);
    expect((await open(who.browser, `${rig.apps.staff}/`)).status).toBe(200);
    expect((await open(who.browser, `${rig.apps.tokens}/`)).status).toBe(200);
  }
  // A provider added in the console, with a client secret of its own.
  const created = await post(rig, alice, '/api/admin/providers', { id: 'console', name: 'Console IdP', issuer: rig.dev.issuer, clientId: 'console-client', clientSecret: CONSOLE_CLIENT_SECRET });
  expect(created.status, created.body).toBe(201);
  // A console app that signs people in with OpenID Connect, and a secret Gatehouse made for it (shown once, here).
  const client = await post(rig, alice, '/api/admin/apps', { id: 'console-sso', name: 'Console SSO', publicUrl: 'https://console-sso.example.com', guard: false, policy: { allow: [{ anyUser: true }] }, oidc: { redirectUris: ['https://console-sso.example.com/callback'] } });
  expect(client.status, client.body).toBe(201);
  const madeSecret = await post(rig, alice, '/api/admin/apps/console-sso/secrets', undefined);
  expect(madeSecret.status, madeSecret.body).toBe(201);
  consoleOidcSecret = (JSON.parse(madeSecret.body) as { secret: string }).secret;
  // A test sign-in: its result page shows what the IdP asserted (and must show no token).
  const started = await alice.browser.request(`${rig.portal}/.gatehouse/test-sign-in/dev`, { form: { csrf_token: alice.csrf }, headers: { origin: rig.portal } });
  const callback = (await alice.browser.follow(started, (url) => url.pathname.startsWith('/.gatehouse/callback/'))).stoppedAt;
  const result = await alice.browser.request(callback!.href);
  testId = /\/tests\/([^/?#]+)/.exec(result.headers.get('location') ?? '')?.[1] ?? '';
  expect(testId, `${result.status} ${result.headers.get('location')}`).not.toBe('');
  await collectSecrets();
}, 60_000);
afterAll(() => rig?.close());

/** Every secret value the server holds for these sessions, apps and providers, and the keys themselves. */
async function collectSecrets(): Promise<void> {
  const { services } = rig.gatehouse;
  const { db } = services.database;
  const add = (what: string, value: string | null | undefined) => {
    if (value && value.length >= 8) secrets.set(value, what);
  };
  for (const [who, signedIn] of [['alice', alice], ['bob', bob]] as const) {
    const cookie = signedIn.browser.cookie('localhost', 'gatehouse_session')!;
    add(`${who}'s session cookie`, cookie);
    add(`${who}'s session cookie hash`, hashSecret(cookie));
    for (const host of ['any.localhost', 'staff.localhost', 'tokens.localhost']) {
      const token = signedIn.browser.cookie(host, 'gatehouse_app')!;
      add(`${who}'s app token on ${host}`, token);
      add(`${who}'s app token hash on ${host}`, hashSecret(token));
    }
  }
  for (const session of await db.selectFrom('sessions').selectAll().execute()) {
    add('session secret hash', session.secret_hash);
    add('encrypted ID token', session.id_token_enc);
    add('encrypted refresh token', session.refresh_token_enc);
    add('encrypted access token', session.access_token_enc);
    add('ID token', services.sessions.idToken(session));
    add('refresh token', services.sessions.refreshToken(session));
    add('access token', services.sessions.accessToken(session));
  }
  for (const row of await db.selectFrom('app_sessions').select('token_hash').execute()) add('app token hash', row.token_hash);
  for (const row of await db.selectFrom('providers').selectAll().execute()) {
    for (const [column, value] of Object.entries(row)) if (/secret|enc/i.test(column) && typeof value === 'string') add(`providers.${column}`, value);
  }
  for (const row of await db.selectFrom('signing_keys').selectAll().execute()) {
    for (const [column, value] of Object.entries(row)) if (/private|enc|secret/i.test(column) && typeof value === 'string') add(`signing_keys.${column}`, value);
  }
  add('config client secret', 'gatehouse-dev-secret');
  add('config client secret', 'hostile-secret');
  add('console client secret', CONSOLE_CLIENT_SECRET);
  add('config OIDC client secret', CONFIG_OIDC_SECRET);
  add('console OIDC client secret', consoleOidcSecret);
  for (const digest of [createHash('sha256').update(CONFIG_OIDC_SECRET).digest(), createHash('sha256').update(consoleOidcSecret).digest()]) {
    for (const encoding of ['hex', 'base64url', 'base64'] as const) add('OIDC client secret hash', digest.toString(encoding));
  }
  for (const row of await db.selectFrom('op_client_secrets').select('secret_hash').execute()) add('OIDC client secret hash', row.secret_hash);
  add('cookie key', services.secrets.cookieKey.toString('base64url'));
  add('cookie key', services.secrets.cookieKey.toString('base64'));
  add('cookie key', services.secrets.cookieKey.toString('hex'));
  for (const key of services.secrets.encryptionKeys.values()) {
    for (const encoding of ['base64url', 'base64', 'hex'] as const) add('encryption key', key.toString(encoding));
  }
  // The walk is only worth something if the session really holds each kind of token.
  const kinds = new Set(secrets.values());
  for (const kind of ['ID token', 'refresh token', 'access token', 'encrypted refresh token', 'console client secret', 'config OIDC client secret', 'console OIDC client secret', 'OIDC client secret hash']) expect(kinds, kind).toContain(kind);
}

/** Keys that name a secret, and the only places (route and key) where such a key carries a value on purpose. */
const SECRET_KEY = /token|secret|hash|password|verifier|private|cookie|credential|^key$|jwt/i;
const INTENDED: Array<{ route: RegExp; key: RegExp; why: string }> = [
  { route: /^\/api\/csrf$/, key: /^csrfToken$/, why: 'the CSRF token is this route’s answer (double-submit, not a credential by itself)' },
  // (also in a person's audit trail on their page: the app changes they made, with the definitions)
  { route: /^\/api\/admin\/(apps|audit|users\/[^/?]+)(\/|\?|$)/, key: /^passAccessToken$/, why: 'the ids of the providers whose token an app receives: names, not tokens' },
  { route: /^\/api\/admin\/(apps|audit|users\/[^/?]+)(\/|\?|$)/, key: /^idTokenAlgorithm$/, why: 'an OpenID Connect client’s ID token signing algorithm (RS256, ES256): a name, not a token' },
  { route: /^\/api\/admin\/apps\/[^/]+\/secrets$/, key: /^secrets$/, why: 'the list of an app’s client secrets: ids, hints and who made them, never a secret or its hash' },
];

function scanKeys(value: unknown, route: string, trail: string, found: string[]): void {
  if (Array.isArray(value)) value.forEach((item, index) => scanKeys(item, route, `${trail}[${index}]`, found));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      // A flag or a count about a secret (`hasClientSecret: false`) is no secret,
      // nor the audit log's redaction marker for a secret that was set or replaced (providers/providerView.ts).
      const harmless = typeof inner === 'boolean' || typeof inner === 'number' || inner === null || inner === '(set)' || inner === '(replaced)';
      if (SECRET_KEY.test(key) && !harmless && !INTENDED.some((intended) => intended.route.test(route) && intended.key.test(key))) found.push(`${route} ${trail}.${key}`);
      scanKeys(inner, route, `${trail}.${key}`, found);
    }
  }
}

async function walk(who: SignedIn, label: string): Promise<{ visited: number; ok: number; okPaths: Set<string> }> {
  const identities = JSON.parse((await who.browser.request(`${rig.portal}/api/me/identities`)).body) as Array<{ id: string }> | { identities: Array<{ id: string }> };
  const identityId = (Array.isArray(identities) ? identities : identities.identities)[0]?.id ?? 'x';
  const params: Record<string, string[]> = { userId: [alice.userId, bob.userId], sessionId: [alice.sessionId, bob.sessionId], identityId: [identityId], providerId: ['dev', 'console', 'hostile'], appId: ['any', 'staff', 'tokens', 'sso', 'console-sso'], testId: [testId] };
  const cookie = who.browser.cookieHeader('localhost');
  let visited = 0;
  let ok = 0;
  const okPaths = new Set<string>();
  for (const route of registeredRoutes(rig.gatehouse.app)) {
    if (!route.methods.includes('GET') || route.path.startsWith('/assets/')) continue;
    // Every combination of the route's parameters' values.
    let paths = [route.path.replace(/\*$/, '')];
    for (const [name, values] of Object.entries(params)) {
      if (!route.path.includes(`:${name}`)) continue;
      paths = paths.flatMap((path) => values.map((value) => path.replace(`:${name}`, value)));
    }
    for (const path of paths) {
      if (path.startsWith('/.gatehouse/sign-in/') || path.startsWith('/.gatehouse/callback/')) continue; // they start or end a sign-in, not answer data
      const answer = await raw(rig, path, { host: new URL(rig.portal).host, cookie, accept: 'application/json' });
      visited++;
      if (answer.status === 200) {
        ok++;
        okPaths.add(path);
      }
      const what = `${label}: GET ${path} (${answer.status})`;
      expect(answer.status, what).toBeLessThan(500);
      for (const [secret, kind] of secrets) expect(answer.body.includes(secret), `${what} contains ${kind}`).toBe(false);
      for (const header of [answer.headers.location, answer.headers['set-cookie']].flat()) {
        if (typeof header !== 'string') continue;
        for (const [secret, kind] of secrets) expect(header.includes(secret), `${what} header contains ${kind}`).toBe(false);
      }
      if (path.startsWith('/api/') && path !== '/api/docs' && String(answer.headers['content-type']).includes('json')) {
        const found: string[] = [];
        scanKeys(JSON.parse(answer.body), path, '', found);
        expect(found, what).toEqual([]);
      }
    }
  }
  return { visited, ok, okPaths };
}

it('no GET route answers an admin with a token, secret, hash, key or cookie value', async () => {
  const { visited, ok, okPaths } = await walk(alice, 'admin');
  expect(visited).toBeGreaterThan(30);
  for (const path of ['/api/session', '/api/me/sessions', '/api/admin/users', `/api/admin/users/${bob.userId}`, '/api/admin/providers', `/api/admin/providers/dev/tests/${testId}`, '/api/admin/apps', '/api/admin/audit']) expect(okPaths).toContain(path);
  // The admin really saw the data (most routes answered 200), so a leak would have shown.
  expect(ok).toBeGreaterThan(25);
});

it('nor a member', async () => {
  const { visited, ok } = await walk(bob, 'member');
  expect(visited).toBeGreaterThan(30);
  expect(ok).toBeGreaterThan(10);
});

it('nor the OpenAPI document, nor the audit CSV (searched for the values above)', async () => {
  for (const path of ['/api/docs', '/api/admin/audit.csv', '/api/admin/audit?pageSize=200']) {
    const answer = await raw(rig, path, { host: new URL(rig.portal).host, cookie: alice.browser.cookieHeader('localhost') });
    expect(answer.status, path).toBe(200);
    for (const [secret, kind] of secrets) expect(answer.body.includes(secret), `${path} contains ${kind}`).toBe(false);
  }
});
