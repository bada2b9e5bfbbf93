/**
 * A revocation to its logout token received by the app: the time from the moment a Gatehouse session
 * is revoked (`SessionStore.revoke`, as sign-out and the account page call it) to the moment a real app
 * on 127.0.0.1 has received and verified the logout token of the session's grant (jose, against the
 * published keys). The parts are the server's own — the session store, the OpenID Provider's store,
 * the outbox, the ties and the drain loop (provide/) — on one node with SQLite, and on two nodes with
 * PostgreSQL (two pools, each with its own loop and sweep; the revocations are made on the first).
 * Each sample is a session of its own with one grant, revoked one at a time.
 *
 *   node --import tsx bench/backchannel-logout.ts            (PostgreSQL from Debian's package)
 */
import { performance } from 'node:perf_hooks';
import { AuditLog } from '../packages/server/src/audit/auditLog.js';
import { parseConfig } from '../packages/server/src/config/load.js';
import { BackchannelDelivery } from '../packages/server/src/provide/backchannelDelivery.js';
import { LogoutDeliveryStore } from '../packages/server/src/provide/logoutDeliveryStore.js';
import { OpStore } from '../packages/server/src/provide/opStore.js';
import { SessionTies } from '../packages/server/src/provide/sessionTies.js';
import { SessionStore } from '../packages/server/src/sessions/sessionStore.js';
import { createTokenCipher } from '../packages/server/src/sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle } from '../packages/server/src/storage/database.js';
import { clientsOf, seedGrant, silentLog, startKeys, startReceiver } from '../packages/server/test/provide/support.js';
import { startPostgres } from '../packages/server/test/support/postgres.js';
import { seedAnn } from '../packages/server/test/support/seed.js';
import { percentile, table } from './lib/stats.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const ISSUER = 'https://gatehouse.example';
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
const timeouts = { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 };

interface Result {
  setup: string;
  received: number[];
  answered: number[];
  missed: number;
}

async function run(setup: string, handles: DatabaseHandle[]): Promise<Result> {
  const keys = await startKeys();
  const pending = new Map<string, (at: number) => void>();
  const app = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: { '/logout': { clientId: 'wiki', alg: 'RS256' } } });
  const clients = clientsOf([{ appId: 'wiki', clientId: 'wiki', backchannelLogoutUri: `${app.origin}/logout`, idTokenAlgorithm: 'RS256' }]);
  // The receiver verifies, then the sample is taken: poll its list (every accepted token is pushed in order).
  let seen = 0;
  const poll = setInterval(() => {
    for (; seen < app.accepted.length; seen++) pending.get(app.accepted[seen]!.sid)?.(performance.now());
  }, 1);
  const first = handles[0]!;
  await seedAnn(first.db);
  const nodes = handles.map((handle) => {
    const sessions = new SessionStore(handle.db, cipher, timeouts);
    const outbox = new LogoutDeliveryStore(handle.db);
    const delivery = new BackchannelDelivery({ store: outbox, clients, sign: keys.sign, issuer: ISSUER, audit: new AuditLog(handle.db), log: silentLog });
    const ties = new SessionTies({ sessions, grants: new OpStore(handle.db), outbox, clients, delivery, log: silentLog });
    delivery.start();
    ties.start();
    return { sessions, delivery, ties };
  });
  const result: Result = { setup, received: [], answered: [], missed: 0 };
  try {
    for (let sample = 0; sample < SAMPLES + 20; sample++) {
      const { session } = await nodes[0]!.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
      const grant = await seedGrant(first.db, { appId: 'wiki', sessionId: session.id });
      const received = new Promise<number | undefined>((resolve) => {
        pending.set(grant.sid, resolve);
        setTimeout(() => resolve(undefined), 5_000);
      });
      const start = performance.now();
      await nodes[0]!.sessions.revoke(session.id, 'sign-out');
      const answered = performance.now();
      const at = await received;
      pending.delete(grant.sid);
      if (sample < 20) continue; // warm-up
      result.answered.push(answered - start);
      if (at === undefined) result.missed++;
      else result.received.push(at - start);
    }
  } finally {
    clearInterval(poll);
    for (const node of nodes) {
      await node.ties.stop();
      await node.delivery.stop();
    }
    await app.close();
    await keys.close();
  }
  return result;
}

const results: Result[] = [];
const sqlite = await openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} }));
results.push(await run('one node, SQLite', [sqlite]));
await sqlite.close();

const server = await startPostgres();
try {
  const url = await server.createDatabase();
  const config = parseConfig({ dataDir: '.', database: { url, pool: { max: 4 } } }, { env: {} });
  const a = await openDatabase(config);
  const b = await openDatabase(config);
  results.push(await run('two nodes, PostgreSQL', [a, b]));
  await a.close();
  await b.close();
} finally {
  server.stop();
}

const ms = (values: number[], p: number) => (values.length ? percentile([...values].sort((x, y) => x - y), p).toFixed(1) : '-');
console.log(`\nRevocation to logout token received and verified by the app (${SAMPLES} samples each, ms)\n`);
console.log(
  table(
    ['setup', 'received p50', 'p90', 'p99', 'max', 'revoke answered p50', 'p99', 'missed'],
    results.map((r) => [r.setup, ms(r.received, 50), ms(r.received, 90), ms(r.received, 99), ms(r.received, 100), ms(r.answered, 50), ms(r.answered, 99), String(r.missed)]),
  ),
);
