import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { ChangeFeed, type Change, type ChangeTransport } from '../../src/events/changes.js';
import { seedAnn } from '../support/seed.js';

/** Two feeds joined as two nodes would be by a real transport: what one publishes, the other receives. */
function joined(): [ChangeTransport, ChangeTransport] {
  const deliver: Array<(change: Change) => void> = [];
  const side = (self: number): ChangeTransport => ({
    // Delivered on a later turn, as over a socket: nothing relies on elsewhere hearing synchronously.
    send: (change) => queueMicrotask(() => deliver[1 - self]?.(structuredClone(change))),
    start: (receive) => void (deliver[self] = receive),
    close: async () => undefined,
  });
  return [side(0), side(1)];
}

describe('the change feed', () => {
  it('tells listeners here at once and sends to elsewhere; what elsewhere sends arrives marked so', async () => {
    const a = new ChangeFeed();
    const b = new ChangeFeed();
    const [toB, toA] = joined();
    a.attach(toB);
    b.attach(toA);
    const heardA: string[] = [];
    const heardB: string[] = [];
    a.subscribe((change, origin) => heardA.push(`${change.type}/${origin}`));
    b.subscribe((change, origin) => heardB.push(`${change.type}/${origin}`));
    a.publish({ type: 'apps-changed' });
    expect(heardA).toEqual(['apps-changed/here']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heardB).toEqual(['apps-changed/elsewhere']);
    expect(heardA).toEqual(['apps-changed/here']);
  });

  it('a confirmed change settles once every transport has confirmed it, and is heard here at once', async () => {
    const feed = new ChangeFeed();
    let confirm: () => void = () => {};
    const asked: Array<boolean | undefined> = [];
    feed.attach({
      send: (_change, confirmed) => {
        asked.push(confirmed);
        return confirmed ? new Promise<void>((resolve) => (confirm = resolve)) : undefined;
      },
      start: () => {},
      close: async () => undefined,
    });
    const heard: string[] = [];
    feed.subscribe((change, origin) => heard.push(`${change.type}/${origin}`));
    let settled = false;
    const confirmed = feed.publishConfirmed({ type: 'sessions-ended', sessionIds: ['s1'] }).then(() => (settled = true));
    expect(heard).toEqual(['sessions-ended/here']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    confirm();
    await confirmed;
    expect(settled).toBe(true);
    // A plain publish asks for no confirmation.
    feed.publish({ type: 'apps-changed' });
    expect(asked).toEqual([true, undefined]);
  });

  // Threat: a cache trusted while its process may not have read a revocation waiting for it.
  it('is out of sync while a transport is not fresh, asked at every read', () => {
    const feed = new ChangeFeed();
    let fresh = false;
    feed.attach({ send: () => {}, start: () => {}, fresh: () => fresh, close: async () => undefined });
    expect(feed.inSync).toBe(false);
    expect(feed.status()).toBe('reconnecting');
    fresh = true;
    expect(feed.inSync).toBe(true);
    expect(feed.status()).toBe('local');
    fresh = false;
    expect(feed.inSync).toBe(false);
  });

  it('keeps telling the other listeners when one throws, and reports it', () => {
    const failures: string[] = [];
    const feed = new ChangeFeed((error, change) => failures.push(`${change.type}: ${(error as Error).message}`));
    const heard: string[] = [];
    feed.subscribe(() => {
      throw new Error('boom');
    });
    feed.subscribe((change) => heard.push(change.type));
    feed.publish({ type: 'everything' });
    expect(heard).toEqual(['everything']);
    expect(failures).toEqual(['everything: boom']);
  });
});

/**
 * Two nodes in one process: two sets of services on one database, their feeds joined. What one node
 * changes must reach what the other keeps in memory at once, not at its cache's expiry.
 */
describe('two nodes on one database', () => {
  let dataDir: string;
  let a: Services;
  let b: Services;
  const log = pino({ enabled: false });
  const request = { log, ip: '127.0.0.1', headers: { 'user-agent': 'test' } };

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-nodes-'));
    const input = {
      publicUrl: 'http://localhost:4180',
      dataDir,
      secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k', key: randomBytes(32).toString('base64url') }] },
      providers: [{ id: 'dev', name: 'Dev', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' }],
    };
    a = await createServices(parseConfig(input, { env: {} }), log);
    b = await createServices(parseConfig(input, { env: {} }), log);
    await seedAnn(a.database.db);
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const join = () => {
    const [toB, toA] = joined();
    a.changes.attach(toB);
    b.changes.attach(toA);
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  // Threat: a session revoked on one node still let in by another node's cache (until its ttl).
  it('a session revoked on one node is over on the other at once — and would not be without the feed', async () => {
    const { secret, session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const token = await a.appSessions.create(session.id, 'app', 'http://app.localhost:4180');
    expect((await b.resolver.portal(secret, request))?.session.id).toBe(session.id);
    expect((await b.resolver.app(token, 'http://app.localhost:4180', request))?.session.id).toBe(session.id);

    // Not joined: node B answers from its cache (the hot path serves cached app sessions).
    await a.sessions.revoke(session.id, 'sign-out');
    expect(b.resolver.cachedApp(token, 'http://app.localhost:4180')?.session.id).toBe(session.id);

    // Joined: the next revocation on A empties B's cache.
    join();
    const second = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const secondToken = await a.appSessions.create(second.session.id, 'app', 'http://app.localhost:4180');
    expect((await b.resolver.app(secondToken, 'http://app.localhost:4180', request))?.session.id).toBe(second.session.id);
    await a.sessions.revokeAllForUser('u1', 'suspended');
    await settle();
    expect(b.resolver.cachedApp(secondToken, 'http://app.localhost:4180')).toBeUndefined();
    expect(await b.resolver.portal(second.secret, request)).toBeUndefined();
  });

  // Threat: a policy tightened in the console on one node still applied the old way on the other.
  it('an app created, changed or deleted on one node is the same on the other', async () => {
    join();
    const definition = { id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } };
    await a.appStore.create(definition);
    await settle();
    expect(b.apps.get('wiki')?.policy.allow).toEqual([{ anyUser: true }]);
    await a.appStore.update('wiki', { ...definition, policy: { allow: [{ emails: ['ann@example.com'] }] } });
    await settle();
    expect(b.apps.get('wiki')?.policy.allow).toEqual([{ emails: ['ann@example.com'] }]);
    await a.appStore.remove('wiki');
    await settle();
    expect(b.apps.get('wiki')).toBeUndefined();
  });

  // Threat: a role removed on one node still counted by another node's cached session.
  it('a session changed on one node (roles, claims) is read again on the other', async () => {
    join();
    const { secret, session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    expect((await b.resolver.portal(secret, request))?.user.roles).toBe('[]');
    await a.accounts.setRoles('u1', ['admin']);
    a.changes.publish({ type: 'sessions-changed', sessionIds: [session.id] });
    await settle();
    expect((await b.resolver.portal(secret, request))?.user.roles).toBe('["admin"]');
  });

  it('a signing key rotated on one node is the one the other signs with', async () => {
    join();
    const kid = await a.signingKeys.rotate();
    await settle();
    expect(b.signingKeys.current().kid).toBe(kid);
  });

  // Threat: a notification lost while a connection was down, leaving a stale allow.
  it('"everything" (changes may have been missed) empties the caches and reads all again', async () => {
    const { secret, session } = await a.sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    expect((await b.resolver.portal(secret, request))?.session.id).toBe(session.id);
    await a.sessions.revoke(session.id, 'sign-out');
    await a.appStore.create({ id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
    join();
    b.changes.attach({ send: () => undefined, start: (deliver) => deliver({ type: 'everything' }), close: async () => undefined });
    await settle();
    expect(await b.resolver.portal(secret, request)).toBeUndefined();
    expect(b.apps.get('wiki')).toBeDefined();
  });
});
