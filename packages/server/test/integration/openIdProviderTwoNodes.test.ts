import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as client from 'openid-client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser } from './support/browser.js';
import { MAIN, startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { authorize, discover, oidcApp, redeem, startBackchannelEndpoint, type BackchannelEndpoint } from './support/relyingParty.js';
import { createTestStore, removeTestStore, storeConfig, testDatabase, type TestStore } from './support/testStore.js';
import { freePort } from '../support/ports.js';

/**
 * The OpenID Provider on two nodes: two built Gatehouse processes (`main.js start`) on one PostgreSQL,
 * the same configuration but for their ports, behind a small front that hands each request to the
 * node the test names (a request carries `x-lb-node`, a browser the cookie `lb_node`). The relying
 * party is openid-client; people sign in at the development IdP process. Whatever one node issued or
 * spent, the other must know at once: nothing of the OP lives in one process's memory.
 */

type NodeName = 'a' | 'b';
const PIN_COOKIE = 'lb_node';
const PIN_HEADER = 'x-lb-node';
const SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const run = promisify(execFile);

let idp: DevIdpProcess;
let store: TestStore;
let dir: string;
let configFile: string;
let portal: string;
let front: Server;
/** The app's back-channel logout endpoint: keeps every logout token it is posted, answering each after a while. */
let backchannel: BackchannelEndpoint;
/** How long the endpoint holds each post: long enough for the other node's drain loop to look meanwhile. */
const HOLD_MS = 4_000;
const nodes: Partial<Record<NodeName, { port: number; metricsPort: number; process: BuiltProcess }>> = {};

function pinOf(request: IncomingMessage): NodeName | undefined {
  const header = request.headers[PIN_HEADER];
  if (header === 'a' || header === 'b') return header;
  const cookie = new RegExp(`(?:^|;\\s*)${PIN_COOKIE}=([ab])(?:;|$)`).exec(request.headers.cookie ?? '');
  return cookie?.[1] as NodeName | undefined;
}

async function waitUntil(ready: () => Promise<boolean>, what: string, logs: () => string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`${what} did not become ready:\n${logs()}`);
}

beforeAll(async () => {
  if (testDatabase() !== 'postgres') throw new Error('two nodes share a PostgreSQL database: run this file in the integration-postgres project');
  backchannel = await startBackchannelEndpoint(HOLD_MS);

  const frontPort = await freePort();
  portal = `http://localhost:${frontPort}`;
  // The front: a request goes to the node it names, and nowhere when it names none (no step happens on a node by chance).
  front = createServer((request, response) => {
    const node = pinOf(request);
    const target = node && nodes[node];
    if (!target) return void response.writeHead(421).end('no node named');
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, method: request.method, path: request.url, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => response.writeHead(502).end());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(frontPort, '127.0.0.1', resolve));

  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  store = await createTestStore();
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-op-nodes-'));
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] };
  const configFor = (port: number, metricsPort: number) => ({
    mode: 'production',
    publicUrl: portal,
    listen: { host: '127.0.0.1', port },
    metrics: { listen: { host: '127.0.0.1', port: metricsPort } },
    ...storeConfig(store),
    log: { level: 'info' },
    secrets,
    signIn: { rateLimit: { max: 10_000 } },
    providers: [{ id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] }],
    apps: [oidcApp('grafana', 'Grafana', `http://grafana.localhost:${frontPort}`, { secrets: [SECRET], backchannelLogoutUri: backchannel.uri, scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'] })],
  });
  for (const name of ['a', 'b'] as const) {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const file = path.join(dir, `gatehouse-${name}.json`);
    writeFileSync(file, JSON.stringify(configFor(port, metricsPort)), { mode: 0o600 });
    if (name === 'a') configFile = file;
    const node = { port, metricsPort, process: startBuiltProcess(file) };
    nodes[name] = node;
    // Ready, and listening to the other node's changes (until then it would bypass its caches).
    await waitUntil(
      async () => {
        const answer = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
        const { checks } = (await answer.json()) as { checks: { changes?: string; providers: Array<{ status: string }> } };
        return answer.ok && checks.changes === 'listening' && checks.providers.every((provider) => provider.status === 'ready');
      },
      `node ${name}`,
      () => node.process.output(),
    );
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([nodes.a?.process.stop(), nodes.b?.process.stop()]);
  await idp?.close();
  await new Promise((resolve) => front?.close(resolve));
  await backchannel?.close();
  if (store) await removeTestStore(store);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const logs = () => `--- node a ---\n${nodes.a?.process.output().slice(-6_000)}\n--- node b ---\n${nodes.b?.process.output().slice(-6_000)}`;

/** The relying party, talking to one node: every request it makes (discovery, token, userinfo) goes there. */
function relyingParty(node: NodeName): Promise<client.Configuration> {
  return discover(portal, 'grafana', SECRET, (url, options) => fetch(url, { ...options, headers: { ...options.headers, [PIN_HEADER]: node } }));
}

/** A browser whose every request to the portal goes to `node`. */
function browserOn(node: NodeName, browser = new ScriptedBrowser()): ScriptedBrowser {
  browser.setCookie('localhost', PIN_COOKIE, node);
  return browser;
}

/** Signing in as `login` (bob by default) when asked; both nodes' logs in the error when the browser does not get back to the app. */
const as = (login = 'bob@example.com') => ({ login, explain: logs });

/** The OP's published key set, as one node answers it. */
async function jwksOf(node: NodeName): Promise<JSONWebKeySet> {
  const answer = await fetch(`${portal}/oidc/jwks`, { headers: { [PIN_HEADER]: node } });
  return (await answer.json()) as JSONWebKeySet;
}

describe('the OpenID Provider on two nodes sharing PostgreSQL', () => {
  let rp: Record<NodeName, client.Configuration>;
  beforeAll(async () => {
    rp = { a: await relyingParty('a'), b: await relyingParty('b') };
  });

  it('a code from node A is redeemed on node B, refreshed on A; the spent refresh token is refused on B', async () => {
    const authorized = await authorize(rp.a, browserOn('a'), as());
    const tokens = await redeem(rp.b, authorized);
    expect(tokens.claims()).toMatchObject({ iss: portal, aud: 'grafana', email: 'bob@example.com' });
    const info = await client.fetchUserInfo(rp.a, tokens.access_token, tokens.claims()!.sub);
    expect(info.email).toBe('bob@example.com');
    const refreshed = await client.refreshTokenGrant(rp.a, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // Threat: a stolen refresh token replayed at another node than the one that rotated it (RFC 9700 §4.14.2).
    await expect(client.refreshTokenGrant(rp.b, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // Its reuse means it leaked: the grant ends, and the refresh token A issued in its place is refused on either node.
    await expect(client.refreshTokenGrant(rp.a, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(rp.b, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('one code redeemed on both nodes at once: exactly one redemption succeeds', async () => {
    // Threat: an intercepted code redeemed by the attacker on one node while the app redeems it on the other (RFC 6749 §4.1.2).
    const authorized = await authorize(rp.a, browserOn('a'), as());
    // Three on each node, all sent together: enough that some find the code unused before any consumes it.
    const outcomes = await Promise.allSettled((['a', 'b', 'a', 'b', 'a', 'b'] as const).map((node) => redeem(rp[node], authorized)));
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(won, JSON.stringify(outcomes.map((outcome) => outcome.status))).toHaveLength(1);
    for (const { reason } of lost) expect(reason).toMatchObject({ error: 'invalid_grant' });
    // The second redemption means the code leaked: what the first one issued is revoked, on both nodes.
    const tokens = won[0]!.value;
    for (const node of ['a', 'b'] as const) {
      await expect(client.fetchUserInfo(rp[node], tokens.access_token, tokens.claims()!.sub)).rejects.toMatchObject({ status: 401 });
      await expect(client.refreshTokenGrant(rp[node], tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    }
  });

  it('a session revoked on node A tells the app once, though both nodes drain the outbox', async () => {
    /** A person's grant to the app (authorized on one node, redeemed on the other) and a second session of theirs on `node`, signed in at the portal. */
    const grantAndSession = async (login: string, node: NodeName) => {
      const other = node === 'a' ? 'b' : 'a';
      const tokens = await redeem(rp[other], await authorize(rp[node], browserOn(node), as(login)));
      const elsewhere = browserOn(node);
      const { hop: form } = await elsewhere.follow(await elsewhere.request(`${portal}/.gatehouse/sign-in/dev`));
      await elsewhere.follow(await elsewhere.request(new URL(formAction(form.body)!, form.url).href, { form: { login, password: login.split('@')[0]! } }));
      const csrf = (JSON.parse((await elsewhere.request(`${portal}/api/csrf`)).body) as { csrfToken: string }).csrfToken;
      // The person ends their other sessions in the account center, from this one.
      const revokeOthers = async () => {
        const answer = await elsewhere.request(`${portal}/api/me/sessions/revoke-others`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, origin: portal } });
        expect(answer.status, answer.body).toBe(200);
        // The sessions of the tests above are among them.
        expect((JSON.parse(answer.body) as { revoked: number }).revoked).toBeGreaterThanOrEqual(1);
      };
      return { tokens, sid: tokens.claims()!.sid as string, revokeOthers };
    };
    const bob = await grantAndSession('bob@example.com', 'a');
    const alice = await grantAndSession('alice@example.com', 'b');
    expect(bob.sid).toBeDefined();
    expect(alice.sid).toBeDefined();

    const keys = createLocalJWKSet(await jwksOf('b'));
    const toldOf = async (sid: string) => {
      const found = [];
      for (const token of backchannel.tokens) {
        const { payload } = await jwtVerify(token, keys, { issuer: portal, audience: 'grafana', typ: 'logout+jwt' });
        if (payload.sid === sid) found.push(payload);
      }
      return found;
    };
    await bob.revokeOthers();
    // Node A posts bob's logout at once; the app holds the post a while. Meanwhile alice's session ends on node B,
    // which wakes B's drain loop: it looks for due deliveries while A still holds bob's.
    await expect.poll(async () => (await toldOf(bob.sid)).length, { timeout: 10_000, interval: 50 }).toBe(1);
    await alice.revokeOthers();
    for (const sid of [bob.sid, alice.sid]) {
      await expect.poll(async () => (await outboxRows(sid))[0]?.delivered_at ?? null, { timeout: HOLD_MS + 10_000 }).not.toBeNull();
    }
    // And both drain loops look again (every 5 s) after the deliveries were answered.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    // Threat: one logout delivered twice (two nodes claiming one delivery): an app that treats logout tokens as one-time (their jti) refuses or logs an attack.
    for (const [person, sid] of [[bob, bob.sid], [alice, alice.sid]] as const) {
      const told = await toldOf(sid);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatchObject({ sub: person.tokens.claims()!.sub, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
      expect((await outboxRows(sid)).map((row) => row.attempts)).toEqual([1]);
    }
    // The grant ended with the session, on the node that did not revoke it too.
    await expect(client.refreshTokenGrant(rp.b, bob.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('an ID token key rotated beside the nodes is published by both before it signs, then signs on both', async () => {
    const browser = browserOn('a');
    const kidOn = async (node: NodeName) => {
      browserOn(node, browser);
      const tokens = await redeem(rp[node], await authorize(rp[node], browser, as()));
      return decodeProtectedHeader(tokens.id_token!).kid;
    };
    const before = await kidOn('a');
    expect(await kidOn('b')).toBe(before);
    // Fail closed: a wait that does not parse rotates nothing (rather than the default, or at once).
    const refused = await run(process.execPath, [MAIN, 'rotate-signing-key', '--config', configFile, '--id-token-key-delay', 'soon'], { timeout: 30_000 }).catch((error: { code?: number; stderr?: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('--id-token-key-delay "soon" is not a duration') });
    const kidsBefore = (await jwksOf('a')).keys.map((key) => key.kid);
    // The operator's command, run against the database (as from a third machine), with a short wait before the key signs.
    const { stdout } = await run(process.execPath, [MAIN, 'rotate-signing-key', '--config', configFile, '--id-token-key-delay', '8s'], { timeout: 30_000 });
    const [, next, from] = /Next ID token key \(id-token-rs256\): (\S+), published now, signing from (\S+)/.exec(stdout) ?? [];
    expect(next, stdout).toBeDefined();
    const switchAt = Date.parse(from!);
    expect(kidsBefore).not.toContain(next);
    // Threat: ID tokens signed by a key the apps' cached key sets do not hold yet (refused sign-ins after a rotation).
    for (const node of ['a', 'b'] as const) {
      await expect.poll(async () => (await jwksOf(node)).keys.map((key) => key.kid)).toContain(next);
      expect((await jwksOf(node)).keys.map((key) => key.kid)).toContain(before);
    }
    const early = { a: await kidOn('a'), b: await kidOn('b') };
    // Both ID tokens above were issued before the switch (else this run is too slow to say anything about "before").
    expect(Date.now(), 'the ID tokens were issued after the key began to sign').toBeLessThan(switchAt);
    expect(early).toEqual({ a: before, b: before });
    // From its time on, it signs on both nodes, each switching on its own clock; the old key stays published.
    for (const node of ['a', 'b'] as const) {
      await expect.poll(() => kidOn(node), { timeout: 20_000, interval: 500 }).toBe(next);
      expect((await jwksOf(node)).keys.map((key) => key.kid)).toContain(before);
    }
  });
});

/** The outbox's rows for a sid: the database both nodes drain. */
async function outboxRows(sid: string): Promise<Array<{ attempts: number; delivered_at: string | null }>> {
  const connection = new pg.Client({ connectionString: store.databaseUrl });
  await connection.connect();
  try {
    return (await connection.query('select attempts, delivered_at from op_logout_deliveries where sid = $1', [sid])).rows as Array<{ attempts: number; delivered_at: string | null }>;
  } finally {
    await connection.end();
  }
}
