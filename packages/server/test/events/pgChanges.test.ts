import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/keys/signingKeys.js';
import { parseConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { loadSecrets } from '../../src/secrets.js';
import type { Change } from '../../src/events/changes.js';
import { announceChange, envelopesOf, parseEnvelope } from '../../src/events/pgChanges.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { seedAnn } from '../support/seed.js';

describe('change notifications: the payload', () => {
  it('splits a long list of sessions into notifications PostgreSQL accepts, losing none', () => {
    const sessionIds = Array.from({ length: 2_000 }, () => randomBytes(16).toString('base64url'));
    const payloads = envelopesOf('me', { type: 'sessions-ended', sessionIds });
    expect(payloads.length).toBeGreaterThan(1);
    // PostgreSQL refuses a payload of 8,000 bytes or more.
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    expect(payloads.flatMap((payload) => (parseEnvelope(payload)!.change as { sessionIds: string[] }).sessionIds)).toEqual(sessionIds);
  });

  // Threat: a notification this version cannot read (another version, a damaged payload) silently ignored, leaving a stale allow.
  it('reads only what it knows: anything else is not a change (the listener then reads everything again)', () => {
    expect(parseEnvelope(JSON.stringify({ from: 'x', change: { type: 'apps-changed', extra: 1 } }))).toEqual({ from: 'x', change: { type: 'apps-changed' } });
    for (const payload of [
      'not json',
      'null',
      JSON.stringify({ change: { type: 'apps-changed' } }),
      JSON.stringify({ from: 'x', change: { type: 'sessions-ended', sessionIds: [1] } }),
      JSON.stringify({ from: 'x', change: { type: 'sessions-ended' } }),
      JSON.stringify({ from: 'x', change: { type: 'policies-rewritten' } }),
    ]) {
      expect(parseEnvelope(payload)).toBeUndefined();
    }
  });
});

/**
 * Two nodes on one real PostgreSQL server, each with its own services (pool and listening connection),
 * in one process: what reaches the other node reaches it through the database, as between two hosts.
 */
describe('change notifications between two nodes on PostgreSQL', () => {
  let server: TestPostgres;
  let url: string;
  let a: Services;
  let b: Services;
  const log = pino({ enabled: false });
  const request = { log, ip: '127.0.0.1', headers: { 'user-agent': 'test' } };
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k', key: randomBytes(32).toString('base64url') }] };
  const config = () =>
    parseConfig(
      {
        publicUrl: 'http://localhost:4180',
        dataDir: '.',
        database: { url, pool: { max: 4 } },
        secrets,
        providers: [{ id: 'dev', name: 'Dev', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' }],
      },
      { env: {} },
    );

  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  beforeEach(async () => {
    url = await server.createDatabase();
    a = await createServices(config(), log);
    b = await createServices(config(), log);
    await Promise.all([listening(a), listening(b)]);
    await seedAnn(a.database.db);
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
  });

  /** Resolves once the node's listening connection is up (the feed reports it). */
  async function listening(node: Services): Promise<void> {
    for (let waited = 0; node.changes.status() !== 'listening'; waited += 10) {
      if (waited > 10_000) throw new Error(`the change listener did not connect (${node.changes.status()})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The next change of this type that reaches the node from elsewhere. */
  function next(node: Services, type: Change['type'], matches: (change: Change) => boolean = () => true): Promise<Change> {
    return new Promise((resolve) => {
      const stop = node.changes.subscribe((change, origin) => {
        if (origin === 'elsewhere' && change.type === type && matches(change)) {
          stop();
          resolve(change);
        }
      });
    });
  }

  /** Ends the listening connections of every node (as a restart of a proxy between them, or an idle timeout, would). */
  async function cutListeners(): Promise<number> {
    const { rows } = await sql<{ ended: boolean }>`select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = 'gatehouse-changes'`.execute(a.database.db);
    return rows.length;
  }

  // Threat: a session revoked on one node still let in by another node's cache, for up to the cache's ttl.
  // How fast the notice travels is measured by the benchmark (bench/README.md, "a revocation reaches the
  // other node"), not asserted here: this proves that every one of many revocations reaches the other
  // node's cache, each one refused there as soon as it is heard.
  it('every revocation on one node ends the session on the other, whose cache still held it', async () => {
    for (let index = 0; index < 200; index++) {
      const { secret, session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
      // Cached on B: from here on only the notification can tell B.
      expect((await b.resolver.portal(secret, request))?.session.id).toBe(session.id);
      const heard = next(b, 'sessions-ended', (change) => 'sessionIds' in change && change.sessionIds.includes(session.id));
      await a.sessions.revoke(session.id, 'sign-out');
      await heard;
      expect(await b.resolver.portal(secret, request)).toBeUndefined();
    }
  }, 120_000);

  // Threat: a policy tightened in the console on one node still applied the old way on the other.
  it('apps, providers and signing keys changed on one node are read again on the other', async () => {
    const appHeard = next(b, 'apps-changed');
    await a.appStore.create({ id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
    await appHeard;
    await expect.poll(() => b.apps.get('wiki')?.policy.allow).toEqual([{ anyUser: true }]);

    const keyHeard = next(b, 'signing-keys-changed');
    const kid = await a.signingKeys.rotate();
    await keyHeard;
    await expect.poll(() => b.signingKeys.current().kid).toBe(kid);
  });

  // Threat: a key rotated from the command line while nodes run, which they would not sign with until restarted.
  it('`rotate-signing-key` run beside the nodes is heard by them', async () => {
    const config_ = config();
    const keys = new SigningKeys(a.database.db, createTokenCipher(loadSecrets(config_)));
    await keys.load();
    const kid = await keys.rotate();
    await announceChange(a.database.db, { type: 'signing-keys-changed' });
    await expect.poll(() => [a.signingKeys.current().kid, b.signingKeys.current().kid]).toEqual([kid, kid]);
  });

  // Threat: a revocation announced while the other node's listening connection was down, lost, and the
  // session still let in by that node's cache: a stale allow.
  it('while the listening connection is down nothing is cached, and once it is back everything is read again', async () => {
    const { session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const token = await a.appSessions.create(session.id, 'app', 'http://app.localhost:4180');
    expect((await b.resolver.app(token, 'http://app.localhost:4180', request))?.session.id).toBe(session.id);
    expect(b.resolver.cachedApp(token, 'http://app.localhost:4180')?.session.id).toBe(session.id);

    const flushed = next(b, 'everything');
    expect(await cutListeners()).toBe(2);
    await flushed;
    expect(b.changes.status()).toBe('reconnecting');
    // The hot path no longer answers from memory: every check goes to the store.
    expect(b.resolver.cachedApp(token, 'http://app.localhost:4180')).toBeUndefined();

    // Revoked on A while B cannot hear it (the notification is sent, and lost for B).
    await a.sessions.revoke(session.id, 'sign-out');
    expect(await b.resolver.app(token, 'http://app.localhost:4180', request)).toBeUndefined();

    // Reconnected with backoff; read everything again; notifications arrive as before.
    const again = next(b, 'everything');
    await listening(b);
    await again;
    const second = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    expect((await b.resolver.portal(second.secret, request))?.session.id).toBe(second.session.id);
    const heard = next(b, 'sessions-ended');
    await a.sessions.revoke(second.session.id, 'sign-out');
    await heard;
    expect(await b.resolver.portal(second.secret, request)).toBeUndefined();
  }, 30_000);

  it('readiness reports the listener', async () => {
    const { buildApp } = await import('../../src/app.js');
    // The report an admin and the metrics listener's /readyz are shown; strangers get the status alone.
    const { readinessReport } = await import('../../src/operations/health.js');
    const app = await buildApp(b, { loggerInstance: log });
    try {
      expect(await readinessReport(b)).toMatchObject({ status: 'ready', checks: { database: 'ok', changes: 'listening' } });
      await cutListeners();
      await expect.poll(async () => (await readinessReport(b)).checks.changes).toBe('reconnecting');
      // Still ready: the node answers correctly meanwhile (from the store, not its caches).
      expect((await app.inject('/readyz')).statusCode).toBe(200);
      await listening(b);
      expect((await readinessReport(b)).checks.changes).toBe('listening');
    } finally {
      await app.close();
    }
  });
});
