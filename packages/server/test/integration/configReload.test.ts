import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildApp } from '../../src/app.js';
import { builtInDefaults } from '../../src/config/defaults.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { localReload, readConfigFrom } from '../../src/reload.js';
import { cookieNames } from '../../src/sessions/cookies.js';
import { createServices, type Services } from '../../src/services.js';
import { ScriptedBrowser } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';
import { startUpstream, type Upstream } from './support/upstream.js';

/**
 * Config reload on a real server (SQLite and PostgreSQL): a config file, changed and read again through
 * the console's "Reload configuration" (the same code SIGHUP runs, reload.ts). What changes takes effect
 * from the next request on; what cannot be applied leaves the running configuration as it was.
 */
let corp: HostileIdp;
let partner: HostileIdp;
let upstream: Upstream;
let store: TestStore;
let dir: string;
let file: string;
let port: number;
let portal: string;
let services: Services;
let app: FastifyInstance;
const logLines: Array<{ level: number; msg: string; problems?: string[] }> = [];

const hosts = ['echo.localhost', 'other.localhost', 'added.localhost', 'ops.localhost'];
const origin = (host: string) => `http://${host}:${port}`;

/** The file as an operator writes it; each test writes its own variation of it. */
function baseConfig(): ConfigInput {
  return {
    mode: 'development',
    publicUrl: portal,
    listen: { host: '127.0.0.1', port },
    ...storeConfig(store),
    organization: { name: 'Before' },
    trustedProxies: ['127.0.0.1/8'],
    signIn: { rateLimit: { max: 10_000 } },
    admins: { emails: ['mallory@example.com'] },
    providers: [
      { id: 'corp', name: 'Corp', issuer: corp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true },
      { id: 'partner', name: 'Partner', issuer: partner.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true },
    ],
    apps: [
      { id: 'echo', name: 'Echo', publicUrl: origin('echo.localhost'), upstream: upstream.url, websockets: true, policy: { allow: [{ emails: ['mallory@example.com'] }] } },
      { id: 'other', name: 'Other', publicUrl: origin('other.localhost'), upstream: upstream.url, websockets: true, policy: { allow: [{ anyUser: true }] } },
    ],
  };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function writeConfig(config: unknown): void {
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
}

beforeAll(async () => {
  corp = await startHostileIdp('gatehouse');
  partner = await startHostileIdp('gatehouse');
  // The partner IdP's person is someone else: trent, at another address.
  partner.subject = 'trent';
  partner.extraClaims = { email: 'trent@example.com' };
  upstream = await startUpstream();
  store = await createTestStore();
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-reload-'));
  file = path.join(dir, 'gatehouse.yaml');
  port = await freePort();
  portal = `http://localhost:${port}`;
  writeConfig(baseConfig());
  // The environment is the test's own (no GATEHOUSE_* of the machine running it).
  const read = () => loadConfig({ file, env: {} }).config;
  const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line) as (typeof logLines)[number]) });
  services = await createServices(read(), log, { file });
  app = await buildApp(services, { loggerInstance: log, reload: localReload(services, read, log) });
  await app.listen({ host: '127.0.0.1', port });
  services.providers.start();
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await upstream?.close();
  await corp?.close();
  await partner?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (store) await removeTestStore(store);
});

/** A browser signed in with `provider` at the portal and, through the handshake, at each app host. */
async function signedIn(provider: 'corp' | 'partner', appHosts: string[] = []): Promise<ScriptedBrowser> {
  const browser = new ScriptedBrowser(hosts);
  const { hop } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/${provider}`));
  expect(hop.status).toBe(200);
  for (const host of appHosts) {
    const { hop: landing } = await browser.follow(await browser.request(`${origin(host)}/`, { headers: { accept: 'text/html' } }));
    expect(new URL(landing.url).origin).toBe(origin(host));
  }
  return browser;
}

/** POST /api/admin/config/reload as the console sends it: the portal's Origin and the session's CSRF token. */
async function reload(browser: ScriptedBrowser, { csrf = true } = {}) {
  const headers: Record<string, string> = { origin: portal };
  if (csrf) headers['x-csrf-token'] = JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string;
  const answer = await browser.request(`${portal}/api/admin/config/reload`, { method: 'POST', headers });
  return { status: answer.status, type: answer.headers.get('content-type') ?? '', body: JSON.parse(answer.body) as Record<string, unknown> & { changes: Record<string, Record<string, string[]>> } };
}

/** nginx's auth_request for `appId` with the browser's cookie of that app host. */
async function forwardAuth(browser: ScriptedBrowser, appId: string, host: string): Promise<number> {
  const headers = { 'x-forwarded-proto': 'http', 'x-forwarded-host': `${host}:${port}`, 'x-forwarded-uri': '/', 'x-forwarded-method': 'GET', cookie: browser.cookieHeader(host) };
  return (await fetch(`${portal}/.gatehouse/auth/${appId}`, { headers })).status;
}

function openSocket(browser: ScriptedBrowser, host: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `${host}:${port}`, cookie: browser.cookieHeader(host) } });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

const echo = (socket: WebSocket, text: string) =>
  new Promise<string>((resolve) => {
    socket.once('message', (data) => resolve(data.toString()));
    socket.send(text);
  });

/** /readyz as an admin reads it (Mallory is one): a stranger is told the status alone. */
const readiness = async (admin: ScriptedBrowser) => JSON.parse((await admin.request(`${portal}/readyz`)).body) as { status: string; checks: { config: { file: string; loadedAt: string; lastReload: { outcome: string; problems?: string[] } | null } } };

describe('config reload', () => {
  let mallory: ScriptedBrowser;
  let trent: ScriptedBrowser;

  beforeAll(async () => {
    mallory = await signedIn('corp', ['echo.localhost', 'other.localhost']);
    trent = await signedIn('partner', ['other.localhost']);
  });

  it('/readyz names the file and when it was read, before any reload', async () => {
    const ready = await readiness(mallory);
    expect(ready.status).toBe('ready');
    expect(ready.checks.config.file).toBe(file);
    expect(Date.parse(ready.checks.config.loadedAt)).toBeLessThanOrEqual(Date.now());
    expect(ready.checks.config.lastReload).toBeNull();
  });

  // Threat: a cross-site page making an admin's browser reload the configuration (CSRF); a non-admin reloading it.
  it('is for admins, with CSRF proof, like every admin change', async () => {
    expect((await reload(mallory, { csrf: false })).body.code).toBe('csrf_failed');
    const notAdmin = await reload(trent);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.code).toBe('forbidden');
    // Nothing was attempted.
    expect((await readiness(mallory)).checks.config.lastReload).toBeNull();
  });

  it('a changed policy applies from the next request on; an open WebSocket it now denies is closed, others stay', async () => {
    expect(await forwardAuth(mallory, 'echo', 'echo.localhost')).toBe(200);
    const denied = await openSocket(mallory, 'echo.localhost');
    const kept = await openSocket(mallory, 'other.localhost');
    const closed = new Promise<number>((resolve) => denied.once('close', (code) => resolve(code)));

    const next = baseConfig();
    next.apps![0]!.policy = { allow: [{ emails: ['nobody@example.com'] }] };
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('applied');
    expect(answer.body.changes.apps).toEqual({ added: [], removed: [], changed: ['echo'] });
    // Both IdPs answer: nothing to warn about.
    expect(answer.body.warnings).toEqual([]);

    expect(await forwardAuth(mallory, 'echo', 'echo.localhost')).toBe(403);
    expect(await closed).toBe(1008);
    // The session is untouched, and so is the WebSocket to an app that still allows her.
    expect((await mallory.request(`${portal}/api/session`)).status).toBe(200);
    expect(await echo(kept, 'still there')).toContain('still there');
    kept.close();
  });

  it('an added app, an added provider, an admin added and another setting apply at once', async () => {
    expect((await fetch(`${portal}/api/admin/users`, { headers: { cookie: trent.cookieHeader('localhost') } })).status).toBe(403);
    const next = baseConfig();
    next.organization = { name: 'After' };
    next.admins = { emails: ['mallory@example.com', 'trent@example.com'] };
    next.providers!.push({ id: 'extra', name: 'Extra IdP', issuer: corp.issuer, clientId: 'gatehouse', clientSecret: 's' });
    next.apps!.push({ id: 'added', name: 'Added', publicUrl: origin('added.localhost'), upstream: upstream.url, policy: { allow: [{ anyUser: true }] } });
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(200);
    expect(answer.body.changes).toMatchObject({
      providers: { added: ['extra'], removed: [], changed: [] },
      apps: { added: ['added'], removed: [], changed: ['echo'] },
      admins: { added: ['trent@example.com'], removed: [] },
      settings: ['organization.name'],
    });
    const offered = JSON.parse((await new ScriptedBrowser().request(`${portal}/api/providers`)).body) as { organization: { name: string }; providers: Array<{ id: string }> };
    expect(offered.organization.name).toBe('After');
    expect(offered.providers.map((provider) => provider.id)).toEqual(['corp', 'partner', 'extra']);
    expect(await forwardAuth(mallory, 'echo', 'echo.localhost')).toBe(200);
    // The new app is known: signed out there is a 401 (sign in), not the 403 of an unknown app.
    expect(await forwardAuth(new ScriptedBrowser(hosts), 'added', 'added.localhost')).toBe(401);
    expect((await trent.request(`${portal}/api/admin/users`)).status).toBe(200);
    const line = logLines.findLast((entry) => entry.msg === 'configuration reloaded');
    expect(line).toMatchObject({ level: 30, settings: ['organization.name'], admins: { added: ['trent@example.com'], removed: [] } });
  });

  it('an invalid file keeps the running configuration, says why in the log, on /readyz and to the console', async () => {
    const before = services.running.current;
    const next = baseConfig() as Record<string, unknown>;
    next.apps = [];
    next.providers = [{ id: 'corp', name: 'Corp', issuer: 'http://idp.example.com', clientId: 'gatehouse' }];
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(422);
    expect(answer.type).toContain('application/problem+json');
    expect(answer.body.code).toBe('config_invalid');
    // Every problem, each at its place in the file, as check-config says it.
    const at = (key: string) => new RegExp(`${escapeRegExp(file)}:1:\\d+: ${escapeRegExp(key)}`);
    expect(answer.body.detail).toMatch(at('providers[0].issuer: must be https'));
    expect(answer.body.detail).toMatch(at('providers[0].clientSecret: is required for client_secret_basic'));
    // Still in force: the apps the file would have removed.
    expect(await forwardAuth(mallory, 'echo', 'echo.localhost')).toBe(200);
    expect(services.running.current.apps.map((entry) => entry.id)).toEqual(['echo', 'other', 'added']);
    expect(services.running.current).toBe(before);
    const ready = await readiness(mallory);
    expect(ready.status).toBe('ready');
    expect(ready.checks.config.lastReload?.outcome).toBe('refused');
    // In the order of the file: the entry that lacks a clientSecret starts before its issuer.
    expect(ready.checks.config.lastReload?.problems).toEqual([
      expect.stringMatching(at('providers[0].clientSecret: is required')),
      expect.stringMatching(at('providers[0].issuer: must be https')),
    ]);
    const error = logLines.findLast((entry) => entry.level === 50);
    expect(error?.msg).toContain('configuration reload refused');
    expect(error?.problems?.join('\n')).toContain('providers[0].issuer');

    // A file that does not even parse: the same, at the line and column where the YAML breaks.
    writeConfig('apps: [\n  - id: x\n    name: [unclosed');
    const broken = await reload(mallory);
    expect(broken.body.code).toBe('config_invalid');
    expect(broken.body.detail).toMatch(new RegExp(`${escapeRegExp(file)}:2:3: Block collections are not allowed within flow collections`));
    expect(await forwardAuth(mallory, 'echo', 'echo.localhost')).toBe(200);
  });

  it('a change to a setting only a restart applies refuses the whole file, naming it', async () => {
    const next = baseConfig();
    next.listen = { host: '127.0.0.1', port: port + 1 };
    next.organization = { name: 'Never' };
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toContain('listen.port: changed, but only a restart applies it');
    // Nothing of it applied, not even what could have been.
    expect(services.running.current.organization.name).toBe('After');
    expect((await readiness(mallory)).checks.config.lastReload?.problems).toEqual(['listen.port: changed, but only a restart applies it (restart Gatehouse, or put the value in force back)']);
  });

  it('a provider the file removes ends its sessions, as turning it off in the console does', async () => {
    const onOther = await openSocket(trent, 'other.localhost');
    const closed = new Promise<number>((resolve) => onOther.once('close', (code) => resolve(code)));
    const next = baseConfig();
    next.providers = next.providers!.filter((provider) => (provider as { id: string }).id !== 'partner');
    next.admins = { emails: ['mallory@example.com', 'trent@example.com'] };
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(200);
    expect(answer.body.changes.providers).toEqual({ added: [], removed: ['partner', 'extra'], changed: [] });
    expect(answer.body.sessionsEnded).toBe(1);
    expect((await trent.request(`${portal}/api/session`)).status).toBe(401);
    expect(await closed).toBe(1008);
    expect((await mallory.request(`${portal}/api/session`)).status).toBe(200);

    const audit = async (type: string) => JSON.parse((await mallory.request(`${portal}/api/admin/audit?type=${type}`)).body).events as Array<{ outcome: string; providerId: string | null; details: Record<string, unknown> }>;
    const disabled = await audit('provider_disabled');
    expect(disabled.find((event) => event.providerId === 'partner')?.details).toMatchObject({ by: 'config', after: null, sessionsEnded: 1 });
    const reloads = await audit('config_reloaded');
    expect(reloads.map((event) => event.outcome)).toEqual(['success', 'failure', 'failure', 'failure', 'success', 'success']);
    // Summaries and problems, never a value of the file (the client secret is "s" everywhere here).
    expect(JSON.stringify(reloads)).not.toContain('"s"');
  });

  it('a file that changes nothing says so', async () => {
    const answer = await reload(mallory);
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('unchanged');
    expect(answer.body.warnings).toEqual([]);
    expect(answer.body.config).toMatchObject({ file });
    expect((await readiness(mallory)).checks.config.lastReload?.outcome).toBe('unchanged');
  });

  it('a provider whose IdP does not answer is applied, with a warning naming it, as check-config --online says it', async () => {
    const closedPort = await freePort();
    const next = baseConfig();
    next.providers!.push({ id: 'down', name: 'Down IdP', issuer: `http://127.0.0.1:${closedPort}`, clientId: 'gatehouse', clientSecret: 's' });
    writeConfig(next);
    const answer = await reload(mallory);
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toBe('applied');
    // partner again (the test before removed it), and the one that does not answer.
    expect(answer.body.changes.providers?.added).toEqual(['partner', 'down']);
    // corp and partner answer; only the one that does not is named.
    expect(answer.body.warnings).toEqual([
      expect.stringMatching(new RegExp(`^providers\\[2\\] \\(down\\)\\.issuer: http://127\\.0\\.0\\.1:${closedPort} did not answer \\(.+\\); signing in with Down IdP fails until it does \\(Gatehouse keeps asking\\)$`)),
    ]);
  });

  it('a new sign-in rate limit counts from the next request on', async () => {
    const start = async () => (await fetch(`${portal}/.gatehouse/sign-in/corp`, { redirect: 'manual', headers: { accept: 'application/json' } })).status;
    const next = baseConfig();
    next.signIn = { rateLimit: { max: 1 } };
    writeConfig(next);
    expect((await reload(mallory)).body.changes.settings).toEqual(['signIn.rateLimit']);
    // This address has started sign-ins in this window already.
    expect(await start()).toBe(429);
    writeConfig(baseConfig());
    expect((await reload(mallory)).status).toBe(200);
    expect(await start()).not.toBe(429);
  });

  // Threat: an admin removed from the file keeping an admins-only app for as long as a decision is reused.
  it('an admin the file no longer names loses an admins-only app at once', async () => {
    const withOps = (emails: string[]) => {
      const next = baseConfig();
      next.admins = { emails };
      next.apps!.push({ id: 'ops', name: 'Ops', publicUrl: origin('ops.localhost'), upstream: upstream.url, policy: { allow: [{ roles: ['admin'] }] } });
      return next;
    };
    writeConfig(withOps(['mallory@example.com']));
    expect((await reload(mallory)).status).toBe(200);
    const { hop } = await mallory.follow(await mallory.request(`${origin('ops.localhost')}/`, { headers: { accept: 'text/html' } }));
    expect(new URL(hop.url).origin).toBe(origin('ops.localhost'));
    expect(await forwardAuth(mallory, 'ops', 'ops.localhost')).toBe(200);

    writeConfig(withOps(['nobody@example.com']));
    expect((await reload(mallory)).body.changes.admins).toEqual({ added: ['nobody@example.com'], removed: ['mallory@example.com'] });
    expect(await forwardAuth(mallory, 'ops', 'ops.localhost')).toBe(403);
  });
});

/**
 * Gatehouse started without a file runs on its built-in development defaults: "Reload configuration"
 * has nothing to read again, and the answer says so (outcome unchanged, file null), never that a file
 * says what is in force. Its data on the test's store, through the environment (GATEHOUSE_DATA_DIR,
 * GATEHOUSE_DATABASE_URL), as an operator's would be.
 */
describe('config reload without a file', () => {
  let defaultsStore: TestStore;
  let defaults: Services;
  let defaultsApp: FastifyInstance;
  const lines: Array<{ msg: string }> = [];

  beforeAll(async () => {
    defaultsStore = await createTestStore();
    const env = { GATEHOUSE_DATA_DIR: defaultsStore.dataDir, ...(defaultsStore.databaseUrl ? { GATEHOUSE_DATABASE_URL: defaultsStore.databaseUrl } : {}) };
    const read = readConfigFrom(undefined, env);
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    defaults = await createServices(read(), log, { file: undefined });
    defaultsApp = await buildApp(defaults, { loggerInstance: log, reload: localReload(defaults, read, log) });
    await defaultsApp.ready();
  });

  afterAll(async () => {
    await defaultsApp?.close();
    await defaults?.close();
    if (defaultsStore) await removeTestStore(defaultsStore);
  });

  it('answers that nothing changed and that there is no file, and logs it so', async () => {
    expect(defaults.running.current).toEqual(parseConfig(builtInDefaults, { env: { GATEHOUSE_DATA_DIR: defaultsStore.dataDir, ...(defaultsStore.databaseUrl ? { GATEHOUSE_DATABASE_URL: defaultsStore.databaseUrl } : {}) } }));
    // An admin of the console (the role granted in the database), signed in.
    const now = Date.now();
    const db = defaults.database.db;
    await db.insertInto('users').values({ id: 'u-admin', email: 'root@example.com', name: 'Root', picture: null, status: 'active', roles: JSON.stringify(['admin']), primary_identity_id: 'i-admin', created_at: now, updated_at: now, last_sign_in_at: now }).execute();
    await db.insertInto('identities').values({ id: 'i-admin', user_id: 'u-admin', provider_id: 'dev', subject: 'root', email: 'root@example.com', email_verified: 1, claims: '{}', linked_at: now, last_used_at: now }).execute();
    const { secret } = await defaults.sessions.create({ userId: 'u-admin', identityId: 'i-admin', providerId: 'dev' });
    const host = new URL(defaults.running.current.publicUrl).host;
    const cookie = `${cookieNames(false).session}=${secret}`;
    const csrf = await defaultsApp.inject({ method: 'GET', url: '/api/csrf', headers: { host, cookie } });
    expect(csrf.statusCode).toBe(200);
    const answer = await defaultsApp.inject({
      method: 'POST',
      url: '/api/admin/config/reload',
      headers: { host, cookie, origin: defaults.running.current.publicUrl, 'x-csrf-token': (csrf.json() as { csrfToken: string }).csrfToken },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ outcome: 'unchanged', config: { file: null, lastReload: { outcome: 'unchanged' } } });
    expect(lines.map((line) => line.msg)).toContain('configuration reloaded: nothing changed (no configuration file: Gatehouse runs on its built-in defaults)');
  });
});
