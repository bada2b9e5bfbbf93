import { parser as promql } from '@prometheus-io/lezer-promql';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { WebSocket } from 'ws';
import { parse as parseYaml } from 'yaml';
import * as client from 'openid-client';
import { formAction, ScriptedBrowser } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { authorizationUrl, discover, followAuthorization, oidcApp } from './support/relyingParty.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';
import { startUpstream, type Upstream } from './support/upstream.js';

const DOCS = fileURLToPath(new URL('../../../../docs/operations/', import.meta.url));

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text format, as far as a scrape of Gatehouse needs: `name{label="value",…} number`. */
function parseScrape(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, name, value] of match[2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The sum of the samples of `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(await response.text());
}

/** A GET on a connection of its own (the cluster hands each new connection to the next worker). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { ...headers, connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The secrets of the OpenID Provider's clients (apps `board` and `vault`). */
const BOARD_SECRET = `board-${randomBytes(24).toString('hex')}`;
const VAULT_SECRET = `vault-${randomBytes(24).toString('hex')}`;

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

/** Alice signs in at the portal through the development IdP's login form. */
async function signIn(browser: ScriptedBrowser, portal: string): Promise<void> {
  const first = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`), isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login: 'alice@example.com', password: 'alice' } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  expect((await browser.request(callback!.href)).status).toBe(303);
}

/**
 * The metrics a real server exposes, driven by real traffic: a sign-in through the development IdP (a
 * separate process), the portal and its API, forward-auth checks, proxied requests allowed, denied and
 * failing upstream, and a WebSocket. The access log is read line by line from its file.
 */
describe('metrics and the access log of one process', () => {
  let dev: DevIdpProcess;
  let upstream: Upstream;
  let hangsUp: Server;
  let gatehouse: RunningGatehouse;
  /** The metrics listener's scrape URL (started by startGatehouse as cli/start.ts starts it). */
  let scrapeUrl: string;
  let dir: string;
  let accessLogFile: string;
  let port: number;
  const hosts = ['open.localhost', 'closed.localhost', 'down.localhost'];
  const origin = (app: string) => `http://${app}.localhost:${port}`;

  beforeAll(async () => {
    port = await freePort();
    const portal = `http://localhost:${port}`;
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-metrics-'));
    accessLogFile = path.join(dir, 'access.log');
    dev = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
    upstream = await startUpstream();
    // An upstream that hangs up on every connection: the proxy's upstream error.
    hangsUp = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangsUp.listen(0, '127.0.0.1', resolve));
    gatehouse = await startGatehouse({
      port,
      trustedProxies: ['127.0.0.1/8'],
      metrics: { listen: { host: '127.0.0.1', port: 0 } },
      accessLog: { enabled: true, destination: accessLogFile },
      session: { cache: { maxMemory: '64MiB' } },
      providers: [{ id: 'dev', name: 'Development IdP', issuer: dev.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, pushedAuthorizationRequests: 'never' }],
      apps: [
        { id: 'open', name: 'Open', publicUrl: origin('open'), upstream: upstream.url, websockets: true, policy: { allow: [{ emails: ['alice@example.com'] }] } },
        { id: 'closed', name: 'Closed', publicUrl: origin('closed'), upstream: upstream.url, websockets: true, policy: { deny: [{ emails: ['alice@example.com'] }], allow: [{ anyUser: true }] } },
        { id: 'down', name: 'Down', publicUrl: origin('down'), upstream: `http://127.0.0.1:${(hangsUp.address() as AddressInfo).port}`, policy: { allow: [{ anyUser: true }] } },
        // Two apps that sign in with Gatehouse's OpenID Provider: one lets alice in, one refuses her.
        oidcApp('board', 'Board', origin('board'), { secrets: [BOARD_SECRET] }, { allow: [{ emails: ['alice@example.com'] }] }),
        oidcApp('vault', 'Vault', origin('vault'), { secrets: [VAULT_SECRET] }, { deny: [{ emails: ['alice@example.com'] }], allow: [{ anyUser: true }] }),
      ],
    });
    scrapeUrl = gatehouse.metricsUrl!;
  });

  afterAll(async () => {
    await gatehouse?.close();
    await upstream?.close();
    hangsUp?.close();
    await dev?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The access log's lines so far (written in blocks, at least once a second: poll for a line). */
  const accessLines = () =>
    readFileSync(accessLogFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  /** Forward-auth as nginx asks it, for the app's origin and `uri`. */
  const forwardAuth = (app: string, uri: string, headers: Record<string, string> = {}) =>
    rawGet(`http://127.0.0.1:${port}/.gatehouse/auth/${app}`, {
      host: `localhost:${port}`,
      'x-forwarded-proto': 'http',
      'x-forwarded-host': `${app}.localhost:${port}`,
      'x-forwarded-uri': uri,
      'x-forwarded-method': 'GET',
      ...headers,
    });

  it('counts requests by area, decisions by rule, sign-ins, upstreams, IdP calls and WebSockets', async () => {
    const before = await scrape(scrapeUrl);
    expect(total(before, 'gatehouse_sign_ins_total')).toBe(0);

    const browser = new ScriptedBrowser(hosts);
    await signIn(browser, gatehouse.url);
    // A callback whose state was never issued: a failed sign-in, counted by its catalogue code.
    expect((await browser.request(`${gatehouse.url}/.gatehouse/callback/dev?state=forged&code=x`)).status).toBe(400);
    // The portal's page and its API.
    expect((await browser.request(`${gatehouse.url}/`, { headers: { accept: 'text/html' } })).status).toBe(200);
    expect((await browser.request(`${gatehouse.url}/api/session`)).status).toBe(200);

    // Through the handshake to the app host, then proxied: allowed by allow[0].
    let { hop } = await browser.follow(await browser.request(`${origin('open')}/hello`, { headers: { accept: 'text/html' } }));
    expect(hop.status).toBe(200);
    expect(new URL(hop.url).origin).toBe(origin('open'));
    ({ hop } = await browser.follow(await browser.request(`${origin('closed')}/`, { headers: { accept: 'text/html' } })));
    expect(hop.status).toBe(403);
    ({ hop } = await browser.follow(await browser.request(`${origin('down')}/`, { headers: { accept: 'text/html' } })));
    expect(hop.status).toBe(502);

    // Forward-auth: signed in and allowed, signed out, and an app id nobody configured.
    expect(await forwardAuth('open', '/x', { cookie: browser.cookieHeader('open.localhost') })).toBe(200);
    expect(await forwardAuth('open', '/x')).toBe(401);
    expect(await rawGet(`http://127.0.0.1:${port}/.gatehouse/auth/made-up-${randomBytes(4).toString('hex')}`, { host: `localhost:${port}` })).toBe(403);

    // A WebSocket through the proxy: open while it lasts.
    const socket = await new Promise<WebSocket>((resolve, reject) => {
      const opened = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `open.localhost:${port}`, cookie: browser.cookieHeader('open.localhost') } });
      opened.once('open', () => resolve(opened));
      opened.once('error', reject);
    });
    const during = await scrape(scrapeUrl);
    expect(total(during, 'gatehouse_websockets_open', { app: 'open' })).toBe(1);
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
    await expect.poll(async () => total(await scrape(scrapeUrl), 'gatehouse_websockets_open', { app: 'open' })).toBe(0);

    const after = await scrape(scrapeUrl);
    expect(total(after, 'gatehouse_sign_ins_total', { provider: 'dev', outcome: 'success' })).toBe(1);
    expect(total(after, 'gatehouse_sign_ins_total', { provider: 'dev', outcome: 'sign_in_expired' })).toBe(1);
    // Discovery, token, JWKS (and userinfo): several calls to the one IdP, none failing.
    expect(total(after, 'gatehouse_idp_request_duration_seconds_count', { provider: 'dev' })).toBeGreaterThanOrEqual(3);
    expect(total(after, 'gatehouse_idp_request_errors_total')).toBe(0);

    expect(total(after, 'gatehouse_http_requests_total', { area: 'portal', app: '', status: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'api', app: '', status: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'proxy', app: 'open', status: '2xx' })).toBe(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'proxy', app: 'closed', status: '4xx' })).toBe(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'proxy', app: 'down', status: '5xx' })).toBe(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'forward_auth', app: 'open', status: '2xx' })).toBe(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'forward_auth', app: 'open', status: '4xx' })).toBe(1);
    expect(total(after, 'gatehouse_http_request_duration_seconds_count', { area: 'forward_auth', app: 'open' })).toBe(2);

    // The proxied GET, and the WebSocket upgrade.
    expect(total(after, 'gatehouse_access_decisions_total', { area: 'proxy', app: 'open', decision: 'allowed', rule: 'allow[0]' })).toBe(2);
    expect(total(after, 'gatehouse_access_decisions_total', { area: 'proxy', app: 'closed', decision: 'denied', rule: 'deny[0]' })).toBe(1);
    expect(total(after, 'gatehouse_access_decisions_total', { area: 'forward_auth', app: 'open', decision: 'unauthenticated' })).toBe(1);
    expect(total(after, 'gatehouse_access_decisions_total', { area: 'forward_auth', app: 'open', decision: 'allowed', rule: 'allow[0]' })).toBe(1);

    // Threat: label cardinality. An app id a client makes up is never a label; it counts under "".
    expect(after.some((sample) => Object.values(sample.labels).some((value) => value.startsWith('made-up-')))).toBe(false);
    expect(total(after, 'gatehouse_access_decisions_total', { area: 'forward_auth', app: '', decision: 'refused' })).toBe(1);

    expect(total(after, 'gatehouse_upstream_errors_total', { app: 'down' })).toBe(1);
    expect(total(after, 'gatehouse_upstream_response_seconds_count', { app: 'open' })).toBe(1);
    expect(total(after, 'gatehouse_sessions_active')).toBe(1);
    expect(total(after, 'gatehouse_session_cache_lookups_total', { result: 'hit' }) + total(after, 'gatehouse_session_cache_lookups_total', { result: 'miss' })).toBeGreaterThan(0);
    expect(total(after, 'gatehouse_database_errors_total')).toBe(0);
    expect(after.some((sample) => sample.name === 'gatehouse_process_cpu_seconds_total')).toBe(true);
  });

  // Regression: WebSocket upgrades were missing from gatehouse_access_decisions_total, so a dashboard of
  // refusals did not see an attacker probing an app's sockets.
  it('counts WebSocket upgrades as access decisions, like any other request to an app', async () => {
    const browser = new ScriptedBrowser(hosts);
    await signIn(browser, gatehouse.url);
    // Signed in at both apps' hosts (the handshake): open lets her in, closed's policy refuses her.
    expect((await browser.follow(await browser.request(`${origin('open')}/`, { headers: { accept: 'text/html' } }))).hop.status).toBe(200);
    expect((await browser.follow(await browser.request(`${origin('closed')}/`, { headers: { accept: 'text/html' } }))).hop.status).toBe(403);
    const decisions = (samples: Sample[], app: string, decision: string, rule: string) => total(samples, 'gatehouse_access_decisions_total', { area: 'proxy', app, decision, rule });
    /** A real WebSocket handshake through Gatehouse: the status it was answered with (101 when it opened). */
    const upgrade = (host: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `${host}:${port}`, ...headers } });
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_request, response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        socket.once('error', reject);
      });

    const before = await scrape(scrapeUrl);
    expect(await upgrade('open.localhost', { cookie: browser.cookieHeader('open.localhost') })).toBe(101);
    expect(await upgrade('open.localhost', {})).toBe(401);
    expect(await upgrade('closed.localhost', { cookie: browser.cookieHeader('closed.localhost') })).toBe(403);
    // Refused before any policy is asked: a foreign page's socket (Cross-Site WebSocket Hijacking), and
    // an app that takes no WebSockets.
    expect(await upgrade('open.localhost', { cookie: browser.cookieHeader('open.localhost'), origin: 'http://evil.example' })).toBe(403);
    expect(await upgrade('down.localhost', {})).toBe(404);
    const after = await scrape(scrapeUrl);

    const delta = (app: string, decision: string, rule: string) => decisions(after, app, decision, rule) - decisions(before, app, decision, rule);
    expect(delta('open', 'allowed', 'allow[0]')).toBe(1);
    expect(delta('open', 'unauthenticated', 'none')).toBe(1);
    expect(delta('closed', 'denied', 'deny[0]')).toBe(1);
    expect(delta('open', 'refused', 'none')).toBe(1);
    expect(delta('down', 'refused', 'none')).toBe(1);
    // Nothing else was counted for them.
    const all = (samples: Sample[]) => total(samples, 'gatehouse_access_decisions_total', { area: 'proxy' });
    expect(all(after) - all(before)).toBe(5);
    await expect.poll(async () => total(await scrape(scrapeUrl), 'gatehouse_websockets_open')).toBe(0);
  });

  it('reports the session cache: lookups, entries and their estimated bytes against the budget, evictions by reason', async () => {
    const browser = new ScriptedBrowser(hosts);
    await signIn(browser, gatehouse.url);
    // Through the handshake: the app host's own cookie, for forward-auth.
    expect((await browser.follow(await browser.request(`${origin('open')}/`, { headers: { accept: 'text/html' } }))).hop.status).toBe(200);
    const cookie = browser.cookieHeader('open.localhost');
    const cache = (samples: Sample[]) => ({
      hits: total(samples, 'gatehouse_session_cache_lookups_total', { result: 'hit' }),
      entries: total(samples, 'gatehouse_session_cache_entries'),
      bytes: total(samples, 'gatehouse_session_cache_bytes'),
      maxBytes: total(samples, 'gatehouse_session_cache_max_bytes'),
      invalidated: total(samples, 'gatehouse_session_cache_evictions_total', { reason: 'invalidation' }),
    });
    const before = cache(await scrape(scrapeUrl));
    // The proxied navigation cached the app host's session: both checks are answered from memory.
    expect(await forwardAuth('open', '/a', { cookie })).toBe(200);
    expect(await forwardAuth('open', '/b', { cookie })).toBe(200);
    const scraped = await scrape(scrapeUrl);
    const during = cache(scraped);
    expect(during.hits - before.hits).toBeGreaterThanOrEqual(2);
    expect(during.entries).toBeGreaterThanOrEqual(2); // her portal cookie and her app-host token at least
    expect(during.maxBytes).toBe(64 * 2 ** 20);
    // A session entry is a few kB (docs/operations/sizing.md): far more than nothing, far less than the budget.
    expect(during.bytes).toBeGreaterThan(during.entries * 1_000);
    expect(during.bytes).toBeLessThan(during.maxBytes);
    for (const reason of ['budget', 'ttl', 'invalidation']) {
      expect(scraped.some((sample) => sample.name === 'gatehouse_session_cache_evictions_total' && sample.labels.reason === reason)).toBe(true);
    }
    expect(total(scraped, 'gatehouse_session_cache_evictions_total', { reason: 'budget' })).toBe(0);

    // She signs out: her session's entries leave the cache as invalidated.
    const csrf = (JSON.parse((await browser.request(`${gatehouse.url}/api/csrf`)).body) as { csrfToken: string }).csrfToken;
    expect((await browser.request(`${gatehouse.url}/.gatehouse/sign-out`, { form: { csrf_token: csrf }, headers: { origin: gatehouse.url } })).status).toBeLessThan(400);
    const after = cache(await scrape(scrapeUrl));
    expect(after.invalidated - during.invalidated).toBeGreaterThanOrEqual(2);
    expect(after.entries).toBeLessThanOrEqual(during.entries - 2);
    expect(after.bytes).toBeLessThan(during.bytes);
    expect(await forwardAuth('open', '/c', { cookie })).toBe(401);
  });

  it('serves metrics only on their own listener', async () => {
    // The public port has no /metrics: it is the portal's 404.
    const response = await fetch(`${gatehouse.url}/metrics`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('gatehouse_');
    expect((await fetch(new URL('/other', scrapeUrl))).status).toBe(404);
    expect((await fetch(scrapeUrl, { method: 'POST' })).status).toBe(405);
    // The operator's readiness report is there too, every check; the public port shows strangers the status alone.
    const report = await fetch(gatehouse.readinessUrl!);
    expect(report.status).toBe(200);
    expect(report.headers.get('cache-control')).toBe('no-store');
    expect(await report.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', changes: process.env.GATEHOUSE_TEST_DATABASE === 'postgres' ? 'listening' : 'local', providers: [{ id: 'dev', status: 'ready' }], config: { file: null } } });
    expect(await (await fetch(`${gatehouse.url}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('writes one access-log line per request — proxied, forward-auth, the portal’s pages and API — field by field, without secrets', async () => {
    const browser = new ScriptedBrowser(hosts);
    await signIn(browser, gatehouse.url);
    const { hop } = await browser.follow(await browser.request(`${origin('open')}/`, { headers: { accept: 'text/html' } }));
    expect(hop.status).toBe(200);
    const userId = JSON.parse((await browser.request(`${gatehouse.url}/api/session`)).body).user.id as string;
    const cookie = browser.cookieHeader('open.localhost');
    // Threat: tokens in logs. A query string carrying a token, and the session cookie, must not be written.
    const secret = `tok_${randomBytes(12).toString('hex')}`;
    expect((await browser.request(`${origin('open')}/report?access_token=${secret}`)).status).toBe(200);
    expect(await forwardAuth('open', `/page?code=${secret}`, { cookie })).toBe(200);
    // Signed in at the closed app's host too (the handshake), where the policy then refuses her.
    expect((await browser.follow(await browser.request(`${origin('closed')}/`, { headers: { accept: 'text/html' } }))).hop.status).toBe(403);
    expect(await forwardAuth('closed', '/admin', { cookie: browser.cookieHeader('closed.localhost') })).toBe(403);

    await expect.poll(() => accessLines().some((line) => line.app === 'closed' && line.path === '/admin')).toBe(true);
    const all = accessLines();
    const text = readFileSync(accessLogFile, 'utf8');
    expect(text).not.toContain(secret);
    for (const value of cookie.split(/;\s*/).map((pair) => pair.slice(pair.indexOf('=') + 1))) expect(text).not.toContain(value);
    expect(all.every((line) => line.log === 'access')).toBe(true);
    // The portal's pages and API have their lines too; the API's with the user of the session it was answered with.
    expect(all.find((line) => line.path === '/api/session' && line.userId === userId)).toMatchObject({ area: 'api', method: 'GET', app: null, decision: null, rule: null, status: 200, upstreamMs: null });
    expect(all.find((line) => line.path === '/.gatehouse/sign-in/dev')).toMatchObject({ area: 'portal', app: null, decision: null, status: 303 });

    const proxied = all.find((line) => line.path === '/report' && line.userId === userId)!;
    expect(proxied).toMatchObject({ log: 'access', area: 'proxy', method: 'GET', host: `open.localhost:${port}`, app: 'open', decision: 'allowed', rule: 'allow[0]', status: 200 });
    expect(Object.keys(proxied).sort()).toEqual(['app', 'area', 'decision', 'host', 'log', 'method', 'path', 'requestId', 'rule', 'status', 'time', 'totalMs', 'upstreamMs', 'userId'].sort());
    expect(proxied.requestId).toMatch(/^[0-9a-f]{12}$/);
    expect(new Date(proxied.time as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(proxied.upstreamMs).toBeGreaterThan(0);
    expect(proxied.totalMs).toBeGreaterThanOrEqual(proxied.upstreamMs as number);
    // No email unless configured: the id identifies the person.
    expect(text).not.toContain('alice@example.com');

    // Forward-auth: the original request the proxy asked about, not the check's own URL.
    const checked = all.find((line) => line.path === '/page' && line.userId === userId)!;
    expect(checked).toMatchObject({ area: 'forward_auth', method: 'GET', host: `open.localhost:${port}`, app: 'open', decision: 'allowed', status: 200, upstreamMs: null });
    const denied = all.find((line) => line.app === 'closed' && line.path === '/admin')!;
    expect(denied).toMatchObject({ decision: 'denied', rule: 'deny[0]', status: 403, userId });
  });

  it('writes one access-log line per request the OpenID Provider answers, with its client’s app and the policy’s decision', async () => {
    const before = await scrape(scrapeUrl);
    const board = await discover(gatehouse.url, 'board', BOARD_SECRET);
    const browser = new ScriptedBrowser(hosts);
    // Signed out: the authorization sends alice to the login step, which sends her to sign in; then back,
    // and (prompt=consent) through the login step once more, which confirms the grant of an app of the organisation.
    const started = await authorizationUrl(board, { scope: 'openid email' });
    expect(started.url.searchParams.get('prompt')).toBe('consent');
    const { back, hop } = await followAuthorization(browser, started.url, 'alice@example.com');
    expect(back, `${hop.status} ${hop.url}`).toBeDefined();
    const code = back!.searchParams.get('code')!;
    const tokens = await client.authorizationCodeGrant(board, back!, { pkceCodeVerifier: started.verifier, expectedState: started.state });
    expect((await client.fetchUserInfo(board, tokens.access_token, tokens.claims()!.sub)).email).toBe('alice@example.com');
    const refreshed = await client.refreshTokenGrant(board, tokens.refresh_token!);
    // A wrong secret, with the live refresh token in the body.
    const wrongSecret = `guess-${randomBytes(24).toString('hex')}`;
    await expect(client.refreshTokenGrant(await discover(gatehouse.url, 'board', wrongSecret), refreshed.refresh_token!)).rejects.toMatchObject({ status: 401 });
    // Signed in, and refused by vault's policy: access_denied at once (prompt=none).
    const vault = await discover(gatehouse.url, 'vault', VAULT_SECRET);
    const silent = await authorizationUrl(vault, { scope: 'openid', prompt: 'none' });
    expect((await followAuthorization(browser, silent.url)).back?.searchParams.get('error')).toBe('access_denied');

    await expect.poll(() => accessLines().some((line) => line.app === 'vault')).toBe(true);
    const userId = JSON.parse((await browser.request(`${gatehouse.url}/api/session`)).body).user.id as string;
    const op = accessLines().filter((line) => line.area === 'oidc');
    const at = (method: string, path: RegExp) => op.filter((line) => line.method === method && path.test(String(line.path)));
    const host = `localhost:${port}`;
    expect(at('GET', /^\/\.well-known\/openid-configuration$/)[0]).toMatchObject({ host, app: null, userId: null, decision: null, rule: null, status: 200, upstreamMs: null });
    // The authorization and the login step without a session: unauthenticated, as the proxy says it.
    const [signedOut, resumed, confirmed, refused] = at('GET', /^\/oidc\/authorize/);
    expect(signedOut).toMatchObject({ path: '/oidc/authorize', app: 'board', userId: null, decision: 'unauthenticated', rule: 'none', status: 303 });
    const steps = at('GET', /^\/oidc\/interaction\//);
    expect(steps.map(({ app, userId: user, decision, status }) => ({ app, user, decision, status }))).toEqual([
      { app: 'board', user: null, decision: 'unauthenticated', status: 303 },
      { app: 'board', user: userId, decision: null, status: 303 },
      { app: 'board', user: userId, decision: null, status: 303 },
    ]);
    // Back from each step, the policy lets her in (asked at each authorization request); vault's refuses her, by its rule.
    for (const back of [resumed, confirmed]) {
      expect(back).toMatchObject({ path: expect.stringMatching(/^\/oidc\/authorize\/[\w-]+$/), app: 'board', userId, decision: 'allowed', rule: 'allow[0]', status: 303 });
    }
    expect(refused).toMatchObject({ path: '/oidc/authorize', app: 'vault', userId, decision: 'denied', rule: 'deny[0]', status: 303 });
    // The code exchange and the refresh: the client's app, the person of the grant, the policy asked again.
    expect(at('POST', /^\/oidc\/token$/).map(({ app, userId: user, decision, rule, status }) => ({ app, user, decision, rule, status }))).toEqual([
      { app: 'board', user: userId, decision: 'allowed', rule: 'allow[0]', status: 200 },
      { app: 'board', user: userId, decision: 'allowed', rule: 'allow[0]', status: 200 },
      // The wrong secret: which app's client was tried, and nothing decided.
      { app: 'board', user: null, decision: null, rule: null, status: 401 },
    ]);
    expect(at('GET', /^\/oidc\/userinfo$/)).toEqual([expect.objectContaining({ app: 'board', userId, decision: 'allowed', rule: 'allow[0]', status: 200 })]);
    for (const line of op) expect(Object.keys(line).sort()).toEqual(['app', 'area', 'decision', 'host', 'log', 'method', 'path', 'requestId', 'rule', 'status', 'time', 'totalMs', 'upstreamMs', 'userId'].sort());

    // Threat: log readers learn credentials. Codes, states, PKCE values and tokens travel in the OP's
    // query strings and bodies, client secrets in its headers and bodies: none of them is written.
    const text = readFileSync(accessLogFile, 'utf8');
    expect(op.every((line) => !String(line.path).includes('?'))).toBe(true);
    const secrets = [code, started.state, started.verifier, started.url.searchParams.get('code_challenge')!, silent.state, BOARD_SECRET, wrongSecret, VAULT_SECRET];
    for (const issued of [tokens, refreshed]) secrets.push(issued.access_token, issued.refresh_token!, issued.id_token!);
    for (const secret of secrets) expect(text).not.toContain(secret);
    // Every cookie of the portal's host but the login step's, whose value is the step's uid: it is in the
    // step's address by design (oidc-provider's interaction URL), and opens nothing without its signed cookie.
    const cookies = browser.cookieHeader('localhost').split(/;\s*/).filter((pair) => !pair.startsWith('gatehouse_op_interaction='));
    expect(cookies.length).toBeGreaterThanOrEqual(4);
    for (const value of cookies.map((pair) => pair.slice(pair.indexOf('=') + 1))) expect(text).not.toContain(value);

    // Counted as the proxy's decisions are, in area oidc: each step once.
    const after = await scrape(scrapeUrl);
    const decided = (app: string, decision: string, rule: string) =>
      total(after, 'gatehouse_access_decisions_total', { area: 'oidc', app, decision, rule }) - total(before, 'gatehouse_access_decisions_total', { area: 'oidc', app, decision, rule });
    // Two authorization requests (back from each login step), the code exchange, userinfo and the refresh.
    expect(decided('board', 'allowed', 'allow[0]')).toBe(5);
    expect(decided('board', 'unauthenticated', 'none')).toBe(2);
    expect(decided('vault', 'denied', 'deny[0]')).toBe(1);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'oidc', app: 'board', status: '2xx' })).toBeGreaterThanOrEqual(3);
    expect(total(after, 'gatehouse_http_requests_total', { area: 'oidc', app: '', status: '2xx' })).toBeGreaterThanOrEqual(1);
  });

  it('has every metric the dashboard and the alert rules use', async () => {
    // Every family the registry has, with or without samples yet: a histogram as its _bucket, _sum and _count.
    const response = await fetch(scrapeUrl);
    const exposed = new Set(
      [...(await response.text()).matchAll(/^# TYPE (\w+) (\w+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? ['_bucket', '_sum', '_count'].map((suffix) => `${name}${suffix}`) : [name!])),
    );
    const dashboard = JSON.parse(readFileSync(path.join(DOCS, 'grafana-dashboard.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }>; templating: { list: Array<{ definition?: string }> } };
    const rules = parseYaml(readFileSync(path.join(DOCS, 'prometheus-alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }> }> };

    const expressions = [
      ...dashboard.panels.flatMap((panel) => panel.targets ?? []).map((target) => target.expr),
      ...rules.groups.flatMap((group) => group.rules).map((rule) => rule.expr),
    ];
    expect(expressions.length).toBeGreaterThan(20);
    const used = new Set<string>();
    for (const expression of expressions) {
      // Grafana's own variables stand for a range; the parser needs a real one.
      const parsed = expression.replace(/\$__\w+/g, '5m');
      const tree = promql.parse(parsed);
      const cursor = tree.cursor();
      do {
        expect(cursor.type.isError, `PromQL does not parse at ${cursor.from}: ${expression}`).toBe(false);
        if (cursor.name === 'VectorSelector') {
          const name = cursor.node.getChild('Identifier');
          if (name) used.add(parsed.slice(name.from, name.to));
        }
      } while (cursor.next());
    }
    for (const variable of dashboard.templating.list) for (const [, name] of variable.definition?.matchAll(/(gatehouse_\w+)/g) ?? []) used.add(name!);

    const ours = [...used].filter((name) => name.startsWith('gatehouse_'));
    expect(ours.length).toBeGreaterThan(10);
    // A histogram is exposed as _bucket, _sum and _count; each is a name here.
    expect(ours.filter((name) => !exposed.has(name))).toEqual([]);
    // And every family the server exposes has a panel (process and Node runtime metrics aside).
    const families = [...exposed].filter((name) => !/^gatehouse_(process|nodejs)_/.test(name)).map((name) => name.replace(/_(bucket|sum|count)$/, ''));
    expect(families.filter((family) => !ours.some((name) => name.startsWith(family)))).toEqual([]);
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      expect(rule.alert).toMatch(/^Gatehouse[A-Za-z]+$/);
      expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
      expect(rule.annotations.summary.length).toBeGreaterThan(10);
    }
  });
});

/** `main.js start` with a config of its own: the real process, as operators run it. */
function startMain(config: Record<string, unknown>, dir: string): BuiltProcess & { ready: Promise<void> } {
  const file = path.join(dir, 'gatehouse.yaml');
  writeFileSync(file, JSON.stringify(config));
  const running = startBuiltProcess(file);
  return { ...running, ready: running.waitFor('Gatehouse is ready') };
}

const productionSecrets = () => ({ cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] });

describe('the metrics listener of the real process', () => {
  let dir: string;
  let store: TestStore;
  // One node's secrets: every start below opens the same store.
  const secrets = productionSecrets();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-metrics-main-'));
    store = await createTestStore();
  });
  afterAll(async () => {
    if (store) await removeTestStore(store);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('with two workers: the primary serves their metrics summed, and the session count once', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const running = await startMain(
      {
        mode: 'production',
        publicUrl: `http://localhost:${port}`,
        listen: { host: '127.0.0.1', port },
        ...storeConfig(store),
        workers: 2,
        secrets,
        metrics: { listen: { port: metricsPort }, hosts: ['gatehouse-0.metrics.internal'] },
        accessLog: { enabled: false },
        apps: [{ id: 'app', name: 'App', publicUrl: `http://app.localhost:${port}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } }],
      },
      dir,
    );
    try {
      await running.ready;
      await expect.poll(() => running.output()).toContain(`Metrics for Prometheus: http://127.0.0.1:${metricsPort}/metrics`);
      // Each on a new connection: the cluster spreads them over both workers.
      const checks = 12;
      for (let index = 0; index < checks; index++) {
        expect(await rawGet(`http://127.0.0.1:${port}/`, { host: `app.localhost:${port}`, accept: 'application/json' })).toBe(401);
      }
      const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(total(samples, 'gatehouse_http_requests_total', { area: 'proxy', app: 'app', status: '4xx' })).toBe(checks);
      expect(total(samples, 'gatehouse_access_decisions_total', { app: 'app', decision: 'unauthenticated' })).toBe(checks);
      // One series, not one per worker, and not their sum.
      expect(samples.filter((sample) => sample.name === 'gatehouse_sessions_active')).toEqual([{ name: 'gatehouse_sessions_active', labels: {}, value: 0 }]);

      // The operator's readiness report: the primary asks a ready worker for its own over IPC (operations/clusterReadiness.ts).
      for (let index = 0; index < 3; index++) {
        const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', providers: [], config: { file: expect.stringMatching(/gatehouse\.yaml$/) } } });
      }
      // Threat: DNS rebinding (test/security/metrics-dns-rebinding.test.ts) — the primary's listener refuses
      // a name the operator did not list, and answers one listed.
      expect(await rawGet(`http://127.0.0.1:${metricsPort}/metrics`, { host: `evil.example:${metricsPort}` })).toBe(421);
      expect(await rawGet(`http://127.0.0.1:${metricsPort}/readyz`, { host: `evil.example:${metricsPort}` })).toBe(421);
      expect(await rawGet(`http://127.0.0.1:${metricsPort}/metrics`, { host: `gatehouse-0.metrics.internal:${metricsPort}` })).toBe(200);
    } finally {
      await running.stop();
    }
  });

  it('without `metrics:` there is no listener, and a metrics port equal to the public one is refused', async () => {
    const port = await freePort();
    const base = { mode: 'production', publicUrl: `http://localhost:${port}`, listen: { host: '127.0.0.1', port }, ...storeConfig(store), secrets };
    const running = await startMain(base, dir);
    try {
      await running.ready;
      expect(running.output()).not.toContain('Metrics for Prometheus');
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { accept: 'application/json' } })).status).toBe(404);
    } finally {
      await running.stop();
    }
    const refused = await startMain({ ...base, metrics: { listen: { port } } }, dir);
    await expect(refused.ready).rejects.toThrow(/metrics\.listen\.port.*must not be the public port/s);
  });
});
