import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/auditLog.js';
import { BackchannelDelivery } from '../../src/provide/backchannelDelivery.js';
import { OpStore } from '../../src/provide/opStore.js';
import { LogoutDeliveryStore } from '../../src/provide/logoutDeliveryStore.js';
import { SessionTies } from '../../src/provide/sessionTies.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { seedAnn } from '../support/seed.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import { postgresForFile } from '../support/postgresForFile.js';
import { logoutDeliverySuite } from './logoutDeliverySuite.js';
import { clientsOf, seedGrant, silentLog, startKeys, startReceiver, type LogoutReceiver, type TestKeys } from './support.js';

/**
 * The back-channel logout outbox on a real PostgreSQL server started for this file: each test gets the
 * database emptied, and for the races a second pool on it, as a second node would have.
 */
const { open } = postgresForFile();

logoutDeliverySuite('PostgreSQL', open, { realConcurrency: true });

/**
 * Two nodes, each with its own pool and drain loop, on one PostgreSQL outbox, posting to one real app
 * that verifies every token: each grant's logout reaches it exactly once.
 */
describe('two nodes draining one outbox on PostgreSQL', () => {
  const ISSUER = 'https://gatehouse.example';
  let keys: TestKeys;
  let app: LogoutReceiver;
  const opened: DatabaseHandle[] = [];
  const nodes: BackchannelDelivery[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((node) => node.stop()));
    await app?.close();
    await keys?.close();
    await Promise.all(opened.splice(0).map((handle) => handle.close()));
  });

  async function twoNodes(options: { interval?: number } = {}) {
    keys = await startKeys();
    app = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: { '/logout': { clientId: 'wiki', alg: 'RS256' } } });
    const clients = clientsOf([{ appId: 'wiki', clientId: 'wiki', backchannelLogoutUri: `${app.origin}/logout`, idTokenAlgorithm: 'RS256' }]);
    const first = await open();
    const second = await open.sibling!();
    opened.push(first, second);
    const made = [first, second].map(
      (handle) =>
        new BackchannelDelivery(
          { store: new LogoutDeliveryStore(handle.db), clients, sign: keys.sign, issuer: ISSUER, audit: new AuditLog(handle.db), log: silentLog },
          { batch: 7, concurrency: 4, interval: options.interval ?? 60_000 },
        ),
    );
    nodes.push(...made);
    const owed = Array.from({ length: 200 }, (_, i) => ({ grantId: `g${i}`, clientId: 'wiki', appId: 'wiki', userId: 'u1', sessionId: 's1', sid: `sid-${i}`, subject: 'sub', uri: `${app.origin}/logout`, reason: 'sign-out' }));
    await new LogoutDeliveryStore(first.db).enqueue(owed);
    return { nodes: made as [BackchannelDelivery, BackchannelDelivery], db: first.db };
  }

  async function expectEachOnce(db: DatabaseHandle['db']) {
    expect(app.rejected).toEqual([]);
    expect(app.accepted).toHaveLength(200);
    expect(new Set(app.accepted.map((token) => token.sid)).size).toBe(200);
    expect(await new LogoutDeliveryStore(db).countsByApp()).toEqual([{ appId: 'wiki', pending: 0, delivered: 200, abandoned: 0 }]);
    const audited = await db.selectFrom('audit_events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'oidc_logout_delivered').executeTakeFirstOrThrow();
    expect(Number(audited.n)).toBe(200);
  }

  it('delivers each logout exactly once while both drain at the same time', async () => {
    const { nodes: [a, b], db } = await twoNodes();
    const handled = await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
    expect(handled.reduce((sum, n) => sum + n, 0)).toBe(200);
    await expectEachOnce(db);
  });

  it('delivers each logout exactly once with both drain loops running and woken', async () => {
    const { nodes: [a, b], db } = await twoNodes({ interval: 20 });
    a.start();
    b.start();
    a.wake();
    b.wake();
    for (let i = 0; i < 1_000 && app.accepted.length < 200; i++) await sleep(10);
    // A few more rounds of both loops: nothing goes out twice.
    await sleep(200);
    await expectEachOnce(db);
  });
});

/**
 * A revocation on one node while the other sweeps: both may try to end the same grants and owe their
 * logouts; each app still receives exactly one logout token per grant.
 */
describe('a revocation on one node while the other sweeps, on PostgreSQL', () => {
  const ISSUER = 'https://gatehouse.example';
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('ends each grant once and delivers its logout once', async () => {
    const keys = await startKeys();
    cleanups.push(() => keys.close());
    const app = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: { '/logout': { clientId: 'wiki', alg: 'RS256' } } });
    cleanups.push(() => app.close());
    const clients = clientsOf([{ appId: 'wiki', clientId: 'wiki', backchannelLogoutUri: `${app.origin}/logout`, idTokenAlgorithm: 'RS256' }]);
    const first = await open();
    const second = await open.sibling!();
    cleanups.push(() => first.close(), () => second.close());
    await seedAnn(first.db);
    const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
    const nodes = [first, second].map((handle) => {
      const sessions = new SessionStore(handle.db, cipher, { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 });
      const outbox = new LogoutDeliveryStore(handle.db);
      const delivery = new BackchannelDelivery({ store: outbox, clients, sign: keys.sign, issuer: ISSUER, audit: new AuditLog(handle.db), log: silentLog }, { interval: 50 });
      const ties = new SessionTies({ sessions, grants: new OpStore(handle.db), outbox, clients, delivery, log: silentLog }, { interval: 600_000 });
      delivery.start();
      ties.start();
      cleanups.push(async () => {
        await ties.stop();
        await delivery.stop();
      });
      return { sessions, ties };
    });
    const [a, b] = nodes as [(typeof nodes)[number], (typeof nodes)[number]];
    for (let round = 0; round < 20; round++) {
      const { session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
      for (let i = 0; i < 5; i++) await seedGrant(first.db, { grantId: `r${round}-g${i}`, appId: 'wiki', sessionId: session.id, sid: `r${round}-sid${i}` });
      // Node a revokes (and ends the grants in its listener) while node b's sweep finds the same revoked session.
      await Promise.all([a.sessions.revoke(session.id, 'sign-out'), b.ties.sweep(), b.ties.sweep()]);
    }
    for (let i = 0; i < 1_000 && app.accepted.length < 100; i++) await sleep(10);
    await sleep(200);
    expect(app.rejected).toEqual([]);
    expect(app.accepted).toHaveLength(100);
    expect(new Set(app.accepted.map((token) => token.sid)).size).toBe(100);
    const ended = await first.db.selectFrom('op_grants').select(['revoked_reason']).execute();
    expect(ended.every((grant) => grant.revoked_reason === 'sign-out')).toBe(true);
  });
});
