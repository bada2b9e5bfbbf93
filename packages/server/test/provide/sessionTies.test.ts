import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/auditLog.js';
import { parseConfig } from '../../src/config/load.js';
import { BackchannelDelivery } from '../../src/provide/backchannelDelivery.js';
import { OpStore } from '../../src/provide/opStore.js';
import { LogoutDeliveryStore } from '../../src/provide/logoutDeliveryStore.js';
import { SessionTies, type GrantEnder } from '../../src/provide/sessionTies.js';
import { SessionStore, type RevokeReason, type Session } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { seedAnn } from '../support/seed.js';
import { clientsOf, seedGrant, silentLog, startKeys, startReceiver, type LogoutReceiver, type TestKeys } from './support.js';

/**
 * Sessions tie it together (provide/sessionTies.ts): whichever way a Gatehouse session ends, its grants
 * end and its apps with a back-channel logout URI are told, through the real session store, the outbox
 * and a real app verifying the logout tokens.
 */

const ISSUER = 'https://gatehouse.example';
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
const timeouts = { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 };

let keys: TestKeys;
let app: LogoutReceiver;
let handle: DatabaseHandle;
let offset: number;
const clock = () => Date.now() + offset;
let sessions: SessionStore;
let outbox: LogoutDeliveryStore;
let delivery: BackchannelDelivery;
let ties: SessionTies;
let grants: GrantEnder;

beforeAll(async () => {
  keys = await startKeys();
  app = await startReceiver({
    jwksUrl: keys.jwksUrl,
    issuer: ISSUER,
    clients: { '/wiki/logout': { clientId: 'wiki', alg: 'RS256' }, '/chat/logout': { clientId: 'chat', alg: 'ES256' } },
  });
});
afterAll(async () => {
  await app?.close();
  await keys?.close();
});

beforeEach(async () => {
  offset = 0;
  app.requests.length = 0;
  app.accepted.length = 0;
  handle = await openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} }));
  await seedAnn(handle.db);
  sessions = new SessionStore(handle.db, cipher, timeouts, clock);
  outbox = new LogoutDeliveryStore(handle.db, clock);
  const clients = clientsOf([
    { appId: 'wiki', clientId: 'wiki', backchannelLogoutUri: `${app.origin}/wiki/logout`, idTokenAlgorithm: 'RS256' },
    { appId: 'chat', clientId: 'chat', backchannelLogoutUri: `${app.origin}/chat/logout`, idTokenAlgorithm: 'ES256' },
    // An OIDC app without a back-channel logout URI: it is never sent anything.
    { appId: 'notes', clientId: 'notes', backchannelLogoutUri: undefined, idTokenAlgorithm: 'RS256' },
  ]);
  delivery = new BackchannelDelivery({ store: outbox, clients, sign: keys.sign, issuer: ISSUER, audit: new AuditLog(handle.db), log: silentLog, now: clock }, { interval: 600_000 });
  grants = new OpStore(handle.db, clock);
  ties = new SessionTies({ sessions, grants: { revokeGrants: (filter, reason) => grants.revokeGrants(filter, reason) }, outbox, clients, delivery, log: silentLog, now: clock }, { interval: 600_000 });
});
afterEach(async () => {
  await ties.stop();
  await delivery.stop();
  await handle.close();
});

const newSession = async (): Promise<Session> => (await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev', idpSid: 'idp-sid' })).session;

async function grantRows() {
  return handle.db.selectFrom('op_grants').select(['grant_id', 'app_id', 'revoked_at', 'revoked_reason']).orderBy('grant_id').execute();
}

async function tokensLeft(grantId: string): Promise<number> {
  return (await handle.db.selectFrom('op_payloads').select('id_hash').where('grant_id', '=', grantId).execute()).length;
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await sleep(10);
  }
  throw new Error('the condition did not come true');
}

describe('ending grants when Gatehouse sessions end', () => {
  it('a session revoked here ends its grants before the revocation returns, and tells each app with a back-channel URI', async () => {
    ties.start();
    delivery.start();
    const session = await newSession();
    const other = await newSession();
    const wiki = await seedGrant(handle.db, { grantId: 'a-wiki', appId: 'wiki', sessionId: session.id });
    const chat = await seedGrant(handle.db, { grantId: 'b-chat', appId: 'chat', sessionId: session.id });
    await seedGrant(handle.db, { grantId: 'c-notes', appId: 'notes', sessionId: session.id });
    await seedGrant(handle.db, { grantId: 'd-other', appId: 'wiki', sessionId: other.id });

    expect(await sessions.revoke(session.id, 'sign-out')).toBe(true);
    // Ended at once, with their codes and tokens: nothing issued under them works any more.
    expect(await grantRows()).toEqual([
      { grant_id: 'a-wiki', app_id: 'wiki', revoked_at: expect.any(Number), revoked_reason: 'sign-out' },
      { grant_id: 'b-chat', app_id: 'chat', revoked_at: expect.any(Number), revoked_reason: 'sign-out' },
      { grant_id: 'c-notes', app_id: 'notes', revoked_at: expect.any(Number), revoked_reason: 'sign-out' },
      { grant_id: 'd-other', app_id: 'wiki', revoked_at: null, revoked_reason: null },
    ]);
    for (const grant of ['a-wiki', 'b-chat', 'c-notes']) expect(await tokensLeft(grant)).toBe(0);
    expect(await tokensLeft('d-other')).toBe(1);
    // Owed to the two apps that take logout tokens, and delivered without waiting for the loop's interval.
    expect(await outbox.forGrant('c-notes')).toBeUndefined();
    await until(() => app.accepted.length === 2);
    expect(app.accepted.map((token) => ({ path: token.path, sid: token.sid, sub: token.sub })).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: '/chat/logout', sid: chat.sid, sub: chat.subject },
      { path: '/wiki/logout', sid: wiki.sid, sub: wiki.subject },
    ]);
    expect(app.rejected).toEqual([]);
    expect((await outbox.forGrant('a-wiki'))!.reason).toBe('sign-out');
  });

  it('ends the grants whichever way the session ends', async () => {
    ties.start();
    const ways: Array<[RevokeReason, (session: Session) => Promise<unknown>]> = [
      ['sign-out-everywhere', () => sessions.revokeAllForUser('u1', 'sign-out-everywhere')],
      ['revoked-by-user', (session) => sessions.revokeForUser('u1', session.id, 'revoked-by-user')],
      ['revoked-by-admin', (session) => sessions.revoke(session.id, 'revoked-by-admin')],
      ['suspended', () => sessions.revokeAllForUser('u1', 'suspended')],
      ['backchannel-logout', () => sessions.revokeByIdpSession('dev', { sid: 'idp-sid' })],
      ['claims-refused', (session) => sessions.revokeMany([session.id], 'claims-refused')],
      ['identity-unlinked', () => sessions.revokeForIdentity('i1', 'identity-unlinked')],
      ['provider-disabled', () => sessions.revokeForProvider('dev', 'provider-disabled')],
      ['rotated', (session) => sessions.revoke(session.id, 'rotated')],
    ];
    for (const [reason, end] of ways) {
      const session = await newSession();
      await seedGrant(handle.db, { grantId: `g-${reason}`, appId: 'wiki', sessionId: session.id });
      await end(session);
      expect((await grantRows()).find((row) => row.grant_id === `g-${reason}`), reason).toMatchObject({ revoked_at: expect.any(Number), revoked_reason: reason });
      expect(await outbox.forGrant(`g-${reason}`), reason).toMatchObject({ reason, appId: 'wiki' });
    }
  });

  it('the sweep ends the grants of a session that expired (idle or absolute expiry publish nothing)', async () => {
    ties.start();
    const idle = await newSession();
    const busy = await newSession();
    await seedGrant(handle.db, { grantId: 'idle-wiki', appId: 'wiki', sessionId: idle.id });
    await seedGrant(handle.db, { grantId: 'busy-wiki', appId: 'wiki', sessionId: busy.id });
    expect(await ties.sweep()).toEqual({ ended: 0, recovered: 0 });
    offset = timeouts.idleTimeout - 1_000;
    await sessions.touch(busy);
    offset = timeouts.idleTimeout;
    expect(await ties.sweep()).toEqual({ ended: 1, recovered: 0 });
    expect((await grantRows()).map((row) => [row.grant_id, row.revoked_reason])).toEqual([['busy-wiki', null], ['idle-wiki', 'session-expired']]);
    expect(await tokensLeft('idle-wiki')).toBe(0);
    expect(await delivery.drain()).toBe(1);
    expect(app.accepted).toHaveLength(1);
    // Past its absolute lifetime, the busy one ends too; a sweep after that finds nothing more.
    offset = timeouts.absoluteLifetime;
    expect(await ties.sweep()).toEqual({ ended: 1, recovered: 0 });
    expect(await ties.sweep()).toEqual({ ended: 0, recovered: 0 });
  });

  it('survives a crash after the session was revoked and before its grants were: the sweep ends them', async () => {
    // Not started: as in a process that died right after the session's row was revoked.
    const session = await newSession();
    await seedGrant(handle.db, { grantId: 'g1', appId: 'wiki', sessionId: session.id });
    await sessions.revoke(session.id, 'revoked-by-admin');
    expect((await grantRows())[0]!.revoked_at).toBeNull();
    expect(await ties.sweep()).toEqual({ ended: 1, recovered: 0 });
    expect((await grantRows())[0]!.revoked_reason).toBe('revoked-by-admin');
    expect(await outbox.forGrant('g1')).toMatchObject({ reason: 'revoked-by-admin' });
  });

  it('survives a crash after the grants ended and before their logouts were owed: the sweep owes them', async () => {
    const session = await newSession();
    await seedGrant(handle.db, { grantId: 'g1', appId: 'wiki', sessionId: session.id });
    await seedGrant(handle.db, { grantId: 'g2', appId: 'notes', sessionId: session.id });
    await grants.revokeGrants({ sessionIds: [session.id] }, 'sign-out');
    expect(await ties.sweep()).toEqual({ ended: 0, recovered: 1 });
    expect(await outbox.forGrant('g1')).toMatchObject({ reason: 'sign-out', uri: `${app.origin}/wiki/logout` });
    expect(await outbox.forGrant('g2')).toBeUndefined();
    expect(await ties.sweep()).toEqual({ ended: 0, recovered: 0 });
    // Grants ended longer ago than a logout is worth delivering are left alone.
    await seedGrant(handle.db, { grantId: 'g3', appId: 'wiki', sessionId: session.id });
    await grants.revokeGrants({ sessionIds: [session.id] }, 'sign-out');
    offset = 24 * 3_600_000 + 1;
    expect(await ties.sweep()).toEqual({ ended: 0, recovered: 0 });
  });

  it('answers the revocation even when the grants cannot be ended now, and the sweep ends them later', async () => {
    ties.start();
    const working = grants;
    grants = { revokeGrants: () => Promise.reject(new Error('the database did not answer')) };
    const session = await newSession();
    await seedGrant(handle.db, { grantId: 'g1', appId: 'wiki', sessionId: session.id });
    expect(await sessions.revoke(session.id, 'sign-out')).toBe(true);
    expect((await grantRows())[0]!.revoked_at).toBeNull();
    grants = working;
    expect(await ties.sweep()).toEqual({ ended: 1, recovered: 0 });
    expect(await outbox.forGrant('g1')).toMatchObject({ reason: 'sign-out' });
  });

  it('owes the logouts of grants ended elsewhere (one app’s access revoked) at once', async () => {
    const session = await newSession();
    await seedGrant(handle.db, { grantId: 'g1', appId: 'wiki', sessionId: session.id });
    await seedGrant(handle.db, { grantId: 'g2', appId: 'notes', sessionId: session.id });
    const ended = await grants.revokeGrants({ sessionIds: [session.id] }, 'revoked-by-user');
    expect(await ties.grantsEnded(ended, 'revoked-by-user')).toBe(1);
    expect(await ties.grantsEnded(ended, 'revoked-by-user')).toBe(0);
  });

  it('does nothing once stopped', async () => {
    ties.start();
    await ties.stop();
    const session = await newSession();
    await seedGrant(handle.db, { grantId: 'g1', appId: 'wiki', sessionId: session.id });
    await sessions.revoke(session.id, 'sign-out');
    expect((await grantRows())[0]!.revoked_at).toBeNull();
  });
});
