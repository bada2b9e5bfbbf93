import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/auditLog.js';
import { parseConfig } from '../../src/config/load.js';
import { BackchannelDelivery, type DeliveryOptions, type LogoutClient } from '../../src/provide/backchannelDelivery.js';
import { LogoutDeliveryStore, type DeliveryToEnqueue } from '../../src/provide/logoutDeliveryStore.js';
import type { Resolve } from '../../src/provide/outgoingAddress.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { clientsOf, silentLog, startKeys, startReceiver, type LogoutReceiver, type TestKeys } from './support.js';

/**
 * Back-channel logout delivery (provide/backchannelDelivery.ts) against a real app: an HTTP server on
 * 127.0.0.1 that verifies every logout token with jose against the OP's published keys, on a real
 * database (SQLite here; two nodes on PostgreSQL in logoutDeliveryPostgres.test.ts).
 */

const ISSUER = 'https://gatehouse.example';
let keys: TestKeys;
let handle: DatabaseHandle;
let store: LogoutDeliveryStore;
let audit: AuditLog;
let receiver: LogoutReceiver | undefined;
const drainers: BackchannelDelivery[] = [];

beforeAll(async () => {
  keys = await startKeys();
});
afterAll(async () => {
  await keys?.close();
});
beforeEach(async () => {
  handle = await openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} }));
  store = new LogoutDeliveryStore(handle.db);
  audit = new AuditLog(handle.db);
});
afterEach(async () => {
  await Promise.all(drainers.splice(0).map((drainer) => drainer.stop()));
  await receiver?.close();
  receiver = undefined;
  await handle.close();
});

const clientPaths = { '/wiki/logout': { clientId: 'wiki-client', alg: 'RS256' }, '/chat/logout': { clientId: 'chat', alg: 'ES256' } } as const;

async function receive(answer?: Parameters<typeof startReceiver>[0]['answer']): Promise<LogoutReceiver> {
  receiver = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: clientPaths, answer });
  return receiver;
}

function wiki(origin: string, extra: Partial<LogoutClient> = {}): Omit<LogoutClient, 'name'> {
  return { appId: 'wiki', clientId: 'wiki-client', backchannelLogoutUri: `${origin}/wiki/logout`, idTokenAlgorithm: 'RS256', ...extra };
}

function owed(appId: string, grantId: string, uri = 'registered at enqueue'): DeliveryToEnqueue {
  return { grantId, appId, clientId: appId, userId: 'u1', sessionId: 's1', sid: `sid-${grantId}`, subject: `sub-${grantId}`, uri, reason: 'sign-out' };
}

function drainer(clients: ReturnType<typeof clientsOf>, options: Partial<DeliveryOptions> = {}, resolve?: Resolve): BackchannelDelivery {
  const made = new BackchannelDelivery({ store, clients, sign: keys.sign, issuer: ISSUER, audit, log: silentLog, ...(resolve ? { resolve } : {}) }, { timeout: 2_000, ...options });
  drainers.push(made);
  return made;
}

async function auditOf(type: string) {
  return handle.db.selectFrom('audit_events').selectAll().where('type', '=', type).orderBy('time').execute();
}

/** Drains until `done` says so (the retries' delays are a few ms here), at most `rounds` times. */
async function drainUntil(delivery: BackchannelDelivery, done: () => Promise<boolean>, rounds = 50): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await delivery.drain();
    if (await done()) return;
    await sleep(10);
  }
  throw new Error('not done after the rounds given');
}

describe('back-channel logout delivery', () => {
  it('posts each owed logout once, as a logout token the app verifies against the published keys', async () => {
    const app = await receive();
    const clients = clientsOf([wiki(app.origin), { appId: 'chat', clientId: 'chat', backchannelLogoutUri: `${app.origin}/chat/logout`, idTokenAlgorithm: 'ES256' }]);
    await store.enqueue([owed('wiki', 'g1'), owed('chat', 'g2')]);
    expect(await drainer(clients).drain()).toBe(2);
    expect(app.rejected).toEqual([]);
    expect(app.requests).toEqual([
      expect.objectContaining({ method: 'POST', contentType: 'application/x-www-form-urlencoded' }),
      expect.objectContaining({ method: 'POST', contentType: 'application/x-www-form-urlencoded' }),
    ]);
    const byPath = Object.fromEntries(app.accepted.map((token) => [token.path, token]));
    // Each client gets its own audience, in the algorithm of its ID tokens, signed by the OP's key of that algorithm.
    expect(byPath['/wiki/logout']).toMatchObject({ alg: 'RS256', kid: expect.stringMatching(/^rs256-/), aud: 'wiki-client', sub: 'sub-g1', sid: 'sid-g1' });
    expect(byPath['/chat/logout']).toMatchObject({ alg: 'ES256', kid: expect.stringMatching(/^es256-/), aud: 'chat', sub: 'sub-g2', sid: 'sid-g2' });
    for (const token of app.accepted) expect(token.lifetime).toBeLessThanOrEqual(120);
    expect(new Set(app.accepted.map((token) => token.jti)).size).toBe(2);
    expect(await store.countsByApp()).toEqual([
      { appId: 'chat', pending: 0, delivered: 1, abandoned: 0 },
      { appId: 'wiki', pending: 0, delivered: 1, abandoned: 0 },
    ]);
    // Delivered is delivered: nothing goes out again.
    expect(await drainer(clients).drain()).toBe(0);
    expect(app.requests).toHaveLength(2);
    const delivered = await auditOf('oidc_logout_delivered');
    expect(delivered.map((event) => ({ app: event.app_id, user: event.target_user_id, session: event.session_id, outcome: event.outcome, details: JSON.parse(event.details) as unknown })).sort((a, b) => a.app!.localeCompare(b.app!))).toEqual([
      { app: 'chat', user: 'u1', session: 's1', outcome: 'success', details: { app: { id: 'chat', name: 'App chat' }, attempts: 1, reason: 'sign-out' } },
      { app: 'wiki', user: 'u1', session: 's1', outcome: 'success', details: { app: { id: 'wiki', name: 'App wiki' }, attempts: 1, reason: 'sign-out' } },
    ]);
  });

  it('tries again with backoff after an app that fails twice, and then delivers', async () => {
    const app = await receive((n) => ({ status: n <= 2 ? 503 : 200 }));
    const delivery = drainer(clientsOf([wiki(app.origin)]), { retry: { firstDelay: 5, maxDelay: 20, maxAttempts: 10, maxAge: 60_000 } });
    await store.enqueue([owed('wiki', 'g1')]);
    await delivery.drain();
    const afterFirst = await store.forGrant('g1');
    expect(afterFirst).toMatchObject({ attempts: 1, deliveredAt: null, lastError: 'the app answered HTTP 503' });
    await drainUntil(delivery, async () => (await store.forGrant('g1'))!.deliveredAt !== null);
    expect(await store.forGrant('g1')).toMatchObject({ attempts: 3, lastError: null });
    // Each attempt a fresh token (its own jti), each one valid; exactly one was taken.
    expect(app.accepted).toHaveLength(3);
    expect(new Set(app.accepted.map((token) => token.jti)).size).toBe(3);
    expect((await auditOf('oidc_logout_delivered')).map((event) => JSON.parse(event.details) as unknown)).toEqual([{ app: { id: 'wiki', name: 'App wiki' }, attempts: 3, reason: 'sign-out' }]);
    expect(await auditOf('oidc_logout_failed')).toEqual([]);
  });

  // Threat: a logout token leaking into the database, the log or the audit log (an app echoing it back in its error page).
  it('abandons after the bound and audits it, with what went wrong but never the token', async () => {
    const app = await receive((n, request) => ({ status: 500, body: `no thanks ${n} ${request.url}` }));
    const delivery = drainer(clientsOf([wiki(app.origin)]), { retry: { firstDelay: 2, maxDelay: 4, maxAttempts: 3, maxAge: 60_000 } });
    await store.enqueue([owed('wiki', 'g1')]);
    await drainUntil(delivery, async () => (await store.forGrant('g1'))!.abandonedAt !== null);
    expect(app.requests).toHaveLength(3);
    expect(await store.forGrant('g1')).toMatchObject({ attempts: 3, deliveredAt: null, lastError: 'the app answered HTTP 500' });
    const [failed, ...more] = await auditOf('oidc_logout_failed');
    expect(more).toEqual([]);
    expect(failed).toMatchObject({ outcome: 'failure', app_id: 'wiki', target_user_id: 'u1', session_id: 's1' });
    expect(JSON.parse(failed!.details)).toEqual({ app: { id: 'wiki', name: 'App wiki' }, attempts: 3, reason: 'sign-out', error: 'the app answered HTTP 500' });
    // No token anywhere Gatehouse keeps things.
    const everything = JSON.stringify([await handle.db.selectFrom('op_logout_deliveries').selectAll().execute(), await handle.db.selectFrom('audit_events').selectAll().execute()]);
    expect(app.tokens).toHaveLength(3);
    for (const token of app.tokens) {
      expect(token.length).toBeGreaterThan(100);
      expect(everything).not.toContain(token);
      expect(everything).not.toContain(token.split('.')[2]);
    }
    expect(await delivery.drain()).toBe(0);
  });

  it('survives a crash: a delivery claimed by a process that died is delivered by another once its claim runs out', async () => {
    const app = await receive();
    await store.enqueue([owed('wiki', 'g1')]);
    // A process claims it and dies before it posts.
    const [dead] = await store.claimDue(10, 300);
    expect(dead).toBeDefined();
    const next = drainer(clientsOf([wiki(app.origin)]));
    expect(await next.drain()).toBe(0);
    await sleep(350);
    expect(await next.drain()).toBe(1);
    expect(app.accepted.map((token) => token.sid)).toEqual(['sid-g1']);
    expect(await store.forGrant('g1')).toMatchObject({ attempts: 1, deliveredAt: expect.any(Number) });
  });

  it('survives a stop mid-post: the delivery is let go, not counted as failed, and the next process delivers it', async () => {
    const app = await receive((n) => (n === 1 ? 'hang' : { status: 200 }));
    await store.enqueue([owed('wiki', 'g1')]);
    const first = drainer(clientsOf([wiki(app.origin)]), { interval: 60_000, timeout: 30_000 });
    first.start();
    first.wake();
    for (let i = 0; i < 200 && app.requests.length === 0; i++) await sleep(10);
    expect(app.requests).toHaveLength(1);
    await first.stop();
    expect(await store.forGrant('g1')).toMatchObject({ attempts: 0, deliveredAt: null, abandonedAt: null });
    expect(await drainer(clientsOf([wiki(app.origin)])).drain()).toBe(1);
    expect(app.requests).toHaveLength(2);
    expect(await store.forGrant('g1')).toMatchObject({ attempts: 1, deliveredAt: expect.any(Number) });
  });

  it('wakes at once when this process owes a logout, without waiting for its interval', async () => {
    const app = await receive();
    const delivery = drainer(clientsOf([wiki(app.origin)]), { interval: 600_000 });
    delivery.start();
    await store.enqueue([owed('wiki', 'g1')]);
    delivery.wake();
    for (let i = 0; i < 500 && app.accepted.length === 0; i++) await sleep(10);
    expect(app.accepted.map((token) => token.sid)).toEqual(['sid-g1']);
    await delivery.stop();
    // Stopped, it posts nothing; started again (a reload of the process's parts), it delivers again.
    await store.enqueue([owed('wiki', 'g2')]);
    delivery.wake();
    expect(await delivery.drain()).toBe(0);
    delivery.start();
    delivery.wake();
    for (let i = 0; i < 500 && app.accepted.length === 1; i++) await sleep(10);
    expect(app.accepted.map((token) => token.sid)).toEqual(['sid-g1', 'sid-g2']);
  });

  // Threat: the token posted to another place than the app registered (a redirect an app, or whoever controls its host, answers).
  it('follows no redirect: a 3xx is a failure, and the place it points to hears nothing', async () => {
    const elsewhere = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: clientPaths });
    try {
      const app = await receive(() => ({ status: 307, headers: { location: `${elsewhere.origin}/wiki/logout` } }));
      await store.enqueue([owed('wiki', 'g1')]);
      await drainer(clientsOf([wiki(app.origin)])).drain();
      expect(app.requests).toHaveLength(1);
      expect(elsewhere.requests).toEqual([]);
      expect(await store.forGrant('g1')).toMatchObject({ attempts: 1, deliveredAt: null, lastError: 'the app answered HTTP 307' });
    } finally {
      await elsewhere.close();
    }
  });

  it('gives up on an app that does not answer in time, and on the rest of its batch without waiting for each', async () => {
    const app = await receive(() => 'hang');
    await store.enqueue([owed('wiki', 'g1'), owed('wiki', 'g2'), owed('wiki', 'g3')]);
    await drainer(clientsOf([wiki(app.origin)]), { timeout: 300, concurrency: 1 }).drain();
    expect(app.requests).toHaveLength(1);
    const rows = await Promise.all(['g1', 'g2', 'g3'].map((grant) => store.forGrant(grant)));
    expect(rows.map((row) => row!.lastError).sort()).toEqual(['no answer in time', 'not tried: no answer in time', 'not tried: no answer in time']);
    expect(rows.every((row) => row!.attempts === 1)).toBe(true);
  });

  it('posts to the URI the app registers now, and abandons what an app no longer takes, sending nothing', async () => {
    const app = await receive();
    await store.enqueue([owed('wiki', 'g1', 'https://old.example/logout'), owed('notes', 'g2'), owed('gone', 'g3')]);
    const clients = clientsOf([wiki(app.origin), { appId: 'notes', clientId: 'notes', backchannelLogoutUri: undefined, idTokenAlgorithm: 'RS256' }]);
    expect(await drainer(clients).drain()).toBe(3);
    expect(app.accepted.map((token) => token.sid)).toEqual(['sid-g1']);
    expect(await store.forGrant('g2')).toMatchObject({ abandonedAt: expect.any(Number), attempts: 0, lastError: 'the app no longer has a back-channel logout URI' });
    expect(await store.forGrant('g3')).toMatchObject({ abandonedAt: expect.any(Number), lastError: 'the app is no longer an OpenID Connect client' });
    expect((await auditOf('oidc_logout_failed')).map((event) => event.app_id).sort()).toEqual(['gone', 'notes']);
  });
});

describe('the workers of one node on one SQLite file', () => {
  it('deliver each logout exactly once while both drain at the same time', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'gatehouse-logout-'));
    const config = parseConfig({ dataDir: folder, database: { path: path.join(folder, 'gatehouse.db') } }, { env: {} });
    const workers = [await openDatabase(config), await openDatabase(config)];
    try {
      const app = await receive();
      const clients = clientsOf([wiki(app.origin)]);
      await new LogoutDeliveryStore(workers[0]!.db).enqueue(Array.from({ length: 60 }, (_, i) => owed('wiki', `g${i}`)));
      const drains = workers.map(
        (worker) => new BackchannelDelivery({ store: new LogoutDeliveryStore(worker.db), clients, sign: keys.sign, issuer: ISSUER, audit: new AuditLog(worker.db), log: silentLog }, { batch: 3, concurrency: 2 }),
      );
      drainers.push(...drains);
      const handled = await Promise.all([drains[0]!.drain(), drains[1]!.drain(), drains[0]!.drain(), drains[1]!.drain()]);
      expect(handled.reduce((sum, n) => sum + n, 0)).toBe(60);
      expect(app.rejected).toEqual([]);
      expect(app.accepted).toHaveLength(60);
      expect(new Set(app.accepted.map((token) => token.sid)).size).toBe(60);
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('the outgoing address guard, at connect time', () => {
  /** Names as a DNS server would answer them (the system's resolver cannot be told what to answer in a test). */
  const names: Record<string, string[]> = {
    'app.internal.test': ['127.0.0.1'],
    'metadata.internal.test': ['169.254.169.254'],
    'linklocal6.internal.test': ['fe80::1'],
    'mixed.internal.test': ['127.0.0.1', '169.254.169.254'],
  };
  const resolve: Resolve = (hostname) => {
    const addresses = names[hostname];
    if (!addresses) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };

  async function deliverTo(uri: (port: string) => string): Promise<{ app: LogoutReceiver; error: string | null; delivered: boolean }> {
    const app = await receive();
    const port = new URL(app.origin).port;
    await store.enqueue([owed('wiki', 'g1')]);
    await drainer(clientsOf([wiki(app.origin, { backchannelLogoutUri: uri(port) })]), {}, resolve).drain();
    const row = (await store.forGrant('g1'))!;
    return { app, error: row.lastError, delivered: row.deliveredAt !== null };
  }

  it('delivers to a loopback address, and to a name that resolves to one (self-hosted apps live there)', async () => {
    for (const uri of [(port: string) => `http://127.0.0.1:${port}/wiki/logout`, (port: string) => `http://app.internal.test:${port}/wiki/logout`]) {
      const { app, delivered } = await deliverTo(uri);
      expect(delivered).toBe(true);
      expect(app.accepted).toHaveLength(1);
      await handle.db.deleteFrom('op_logout_deliveries').execute();
      await receiver?.close();
      receiver = undefined;
    }
  });

  // Threat: server-side request forgery against the cloud metadata service (169.254.169.254) through an app's back-channel URI.
  it('refuses the metadata address and link-local ones, given as an address', async () => {
    for (const host of ['169.254.169.254', '[fe80::1]', '[::ffff:169.254.169.254]', '[64:ff9b::a9fe:a9fe]', '[fd00:ec2::254]', '100.100.100.200']) {
      const { error, delivered } = await deliverTo(() => `http://${host}/latest/meta-data/`);
      expect(delivered, host).toBe(false);
      expect(error, host).toMatch(/^refused to connect to .*: (link-local|a cloud metadata service)/);
      await handle.db.deleteFrom('op_logout_deliveries').execute();
      await receiver?.close();
      receiver = undefined;
    }
  });

  // Threat: 0.0.0.0 reaches the host itself on Linux: an address that looks like none must not slip past as one.
  it('refuses "this network" (0.0.0.0), which would reach the host itself', async () => {
    const { app, error, delivered } = await deliverTo((port) => `http://0.0.0.0:${port}/wiki/logout`);
    expect(delivered).toBe(false);
    expect(app.requests).toEqual([]);
    expect(error).toContain('"this network"');
  });

  // Threat: a name that resolves to the metadata address (an attacker's DNS, or DNS rebinding: harmless when checked, metadata when connected).
  it('refuses a name resolving to a link-local address, judged on the address the socket would connect to', async () => {
    for (const name of ['metadata.internal.test', 'linklocal6.internal.test', 'mixed.internal.test']) {
      const { app, error, delivered } = await deliverTo((port) => `http://${name}:${port}/wiki/logout`);
      expect(delivered, name).toBe(false);
      expect(app.requests, name).toEqual([]);
      expect(error, name).toMatch(new RegExp(`^refused to connect to ${name.replaceAll('.', '\\.')} \\((169\\.254\\.169\\.254|fe80::1)\\): link-local`));
      await handle.db.deleteFrom('op_logout_deliveries').execute();
      await receiver?.close();
      receiver = undefined;
    }
  });
});
