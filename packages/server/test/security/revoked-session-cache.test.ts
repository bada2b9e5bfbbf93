import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { SessionResolver } from '../../src/sessions/sessionResolver.js';
import { SessionStore, type PersonKey, type SessionWithPerson } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { ChangeFeed } from '../../src/events/changes.js';
import { seedAnn } from '../support/seed.js';

// Threat: a revocation (sign-out, an admin's revoke, back-channel logout, suspension) that lands while
// the session cache is loading that very session is lost: the load read the row before the revocation,
// stores it after the revocation's cache invalidation ran, and the revoked session is then served from
// the cache (on the proxy's hot path without a database read) until the cache's ttl.

/** The real SQLite store, with reads that can be held open after the row was read (the race window). */
class HeldSessionStore extends SessionStore {
  private hold: Promise<void> | undefined;
  private readStarted: (() => void) | undefined;

  /** The next read waits, after reading its row, until `release` is called; resolves once that read ran. */
  holdNextRead(): { read: Promise<void>; release: () => void } {
    let release!: () => void;
    this.hold = new Promise((resolve) => (release = resolve));
    const read = new Promise<void>((resolve) => (this.readStarted = resolve));
    return { read, release };
  }

  override async findWithPerson(by: PersonKey): Promise<SessionWithPerson | undefined> {
    const found = await super.findWithPerson(by);
    await this.held();
    return found;
  }

  private async held(): Promise<void> {
    const hold = this.hold;
    if (!hold) return;
    this.hold = undefined;
    this.readStarted?.();
    await hold;
  }
}

describe('a session revoked while the cache loads it', () => {
  let dataDir: string;
  let services: Services;
  let sessions: HeldSessionStore;
  let resolver: SessionResolver;
  const log = pino({ enabled: false });
  const request = { log, ip: '127.0.0.1', headers: { 'user-agent': 'test' } };
  const appOrigin = 'http://app.localhost:4180';

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-race-'));
    const config = parseConfig({ publicUrl: 'http://localhost:4180', dataDir, providers: [{ id: 'dev', name: 'Dev', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' }] }, { env: {} });
    services = await createServices(config, log);
    const { db } = services.database;
    await seedAnn(db, { subject: 'sub-1', primary: false });
    sessions = new HeldSessionStore(db, createTokenCipher(services.secrets), config.session);
    // This store's revocations reach the resolver as the composition root wires them (services.ts).
    const changes = new ChangeFeed();
    sessions.onRevoke((revoked) => changes.publish({ type: 'sessions-ended', sessionIds: revoked.map((session) => session.id) }));
    resolver = new SessionResolver({ sessions, claims: services.claims, providers: services.providers, changes });
  });
  afterEach(async () => {
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is not cached for the portal cookie', async () => {
    const { secret, session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const { read, release } = sessions.holdNextRead();
    const resolving = resolver.portal(secret, request);
    await read; // the row was read while the session was active...
    expect(await sessions.revoke(session.id, 'revoked-by-admin')).toBe(true); // ...and revoked now
    release();
    // The request that raced the revocation is answered from a read after it.
    expect(await resolving).toBeUndefined();
    // And nothing was cached: the next request reads the database and finds the session revoked.
    expect(await resolver.portal(secret, request)).toBeUndefined();
  });

  it('is not cached for an app-host token (the hot path serves only cached sessions)', async () => {
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const token = await services.appSessions.create(session.id, 'app', appOrigin);
    const { read, release } = sessions.holdNextRead();
    const resolving = resolver.app(token, appOrigin, request);
    await read;
    await sessions.revokeAllForUser('u1', 'suspended');
    release();
    await resolving;
    expect(resolver.cachedApp(token, appOrigin)).toBeUndefined();
    expect(await resolver.app(token, appOrigin, request)).toBeUndefined();
  });

  it('is cached as before when no revocation intervenes (and dropped by a later one)', async () => {
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const token = await services.appSessions.create(session.id, 'app', appOrigin);
    expect((await resolver.app(token, appOrigin, request))?.session.id).toBe(session.id);
    expect(resolver.cachedApp(token, appOrigin)?.session.id).toBe(session.id);
    await sessions.revoke(session.id, 'sign-out');
    expect(resolver.cachedApp(token, appOrigin)).toBeUndefined();
  });

  it('is not cached when found by id for the OpenID Provider (a token’s grant names its session)', async () => {
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const { read, release } = sessions.holdNextRead();
    const resolving = resolver.byId(session.id);
    await read;
    await sessions.revoke(session.id, 'revoked-by-user');
    release();
    expect(await resolving).toBeUndefined();
    expect(await resolver.byId(session.id)).toBeUndefined();
  });

  it('serves a session found by id from the cache until a revocation drops it', async () => {
    // Threat: an app refreshing its tokens after the person's session ended elsewhere (an admin's revoke, suspension).
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    expect((await resolver.byId(session.id))?.user.id).toBe('u1');
    const { read, release } = sessions.holdNextRead();
    // Cached: no read of the store (the held read would not start).
    expect((await resolver.byId(session.id))?.session.id).toBe(session.id);
    await sessions.revoke(session.id, 'revoked-by-admin');
    const answer = resolver.byId(session.id);
    await read; // after the revocation the store is read again...
    release();
    expect(await answer).toBeUndefined(); // ...and the session is over
  });

  it('never answers a cookie or an app token with a session cached by its id', async () => {
    // Threat: a session id is a public handle (the account center lists them); presented as the portal
    // cookie or an app host's token it must not find the session its id names.
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    expect(await resolver.byId(session.id)).toBeDefined();
    expect(await resolver.portal(session.id, request)).toBeUndefined();
    expect(resolver.cachedApp(session.id, appOrigin)).toBeUndefined();
    expect(await resolver.app(session.id, appOrigin, request)).toBeUndefined();
    // And the id's entry is still served: the miss above did not displace it.
    expect((await resolver.byId(session.id))?.session.id).toBe(session.id);
  });
});
