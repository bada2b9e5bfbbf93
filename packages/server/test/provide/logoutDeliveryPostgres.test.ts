import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/auditLog.js';
import { parseConfig } from '../../src/config/load.js';
import { BackchannelDelivery } from '../../src/provide/backchannelDelivery.js';
import { LogoutDeliveryStore } from '../../src/provide/logoutDeliveryStore.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { logoutDeliverySuite, type Opener } from './logoutDeliverySuite.js';
import { clientsOf, silentLog, startKeys, startReceiver, type LogoutReceiver, type TestKeys } from './support.js';

/**
 * The back-channel logout outbox on a real PostgreSQL server started for this file: each test gets the
 * database emptied, and for the races a second pool on it, as a second node would have.
 */
let server: TestPostgres;
let url: string;
let keeper: DatabaseHandle;
beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  keeper = await openDatabase(config(url));
}, 60_000);
afterAll(async () => {
  await keeper?.close();
  server?.stop();
});

const config = (databaseUrl: string) => parseConfig({ dataDir: '.', database: { url: databaseUrl, pool: { max: 4 } } }, { env: {} });

const open: Opener = Object.assign(
  async () => {
    const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'gatehouse_migrations%'`.execute(keeper.db);
    await keeper.db.transaction().execute(async (trx) => {
      for (const row of rows) await sql`delete from ${sql.table(row.name)}`.execute(trx);
    });
    return openDatabase(config(url));
  },
  { sibling: () => openDatabase(config(url)) },
);

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
