import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { AppRegistry } from '../../src/apps/appRegistry.js';
import { AuditLog } from '../../src/audit/auditLog.js';
import { parseConfig } from '../../src/config/load.js';
import { OpStore } from '../../src/provide/opStore.js';
import { backchannelLogout, type BackchannelLogout } from '../../src/provide/backchannelLogout.js';
import { logoutClientsOf } from '../../src/provide/backchannelDelivery.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle } from '../../src/storage/database.js';
import { seedAnn } from '../support/seed.js';
import { seedGrant, silentLog, startKeys, startReceiver, type LogoutReceiver, type TestKeys } from './support.js';

/**
 * Back-channel logout as the composition root puts it together (provide/backchannelLogout.ts): from the
 * app catalogue of a configuration, a revocation reaches the app's registered URI.
 */
describe('back-channel logout, put together', () => {
  const ISSUER = 'http://localhost:4180';
  let keys: TestKeys | undefined;
  let app: LogoutReceiver | undefined;
  let handle: DatabaseHandle | undefined;
  let logout: BackchannelLogout | undefined;
  afterEach(async () => {
    await logout?.stop();
    await app?.close();
    await keys?.close();
    await handle?.close();
  });

  function config(backchannelUri: string) {
    return parseConfig(
      {
        publicUrl: ISSUER,
        dataDir: '.',
        database: { path: ':memory:' },
        apps: [
          {
            id: 'wiki',
            name: 'Wiki',
            publicUrl: 'http://wiki.localhost:4180',
            guard: false,
            policy: { allow: [{ anyUser: true }] },
            oidc: { clientId: 'wiki-client', redirectUris: ['http://127.0.0.1:3000/callback'], backchannelLogoutUri: backchannelUri, idTokenAlgorithm: 'ES256' },
          },
          {
            id: 'notes',
            name: 'Notes',
            publicUrl: 'http://notes.localhost:4180',
            guard: false,
            policy: { allow: [{ anyUser: true }] },
            oidc: { redirectUris: ['http://127.0.0.1:3001/callback'] },
          },
          { id: 'files', name: 'Files', publicUrl: 'http://files.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } },
        ],
      },
      { env: {} },
    );
  }

  it('reads the clients from the app catalogue: client id, algorithm, back-channel URI, now', () => {
    const clients = logoutClientsOf(new AppRegistry(config('http://127.0.0.1:3000/backchannel').apps));
    expect(clients.client('wiki')).toEqual({ appId: 'wiki', name: 'Wiki', clientId: 'wiki-client', backchannelLogoutUri: 'http://127.0.0.1:3000/backchannel', idTokenAlgorithm: 'ES256' });
    expect(clients.client('notes')).toEqual({ appId: 'notes', name: 'Notes', clientId: 'notes', backchannelLogoutUri: undefined, idTokenAlgorithm: 'RS256' });
    // A guarded app that is no OIDC client, and an app that does not exist, are no clients.
    expect(clients.client('files')).toBeUndefined();
    expect(clients.client('nope')).toBeUndefined();
    expect(clients.withBackchannel()).toEqual(['wiki']);
  });

  it('a session revoked here reaches the app’s registered back-channel URI, and stops when told', async () => {
    keys = await startKeys();
    app = await startReceiver({ jwksUrl: keys.jwksUrl, issuer: ISSUER, clients: { '/backchannel': { clientId: 'wiki-client', alg: 'ES256' } } });
    const parsed = config(`${app.origin}/backchannel`);
    handle = await openDatabase(parsed);
    await seedAnn(handle.db);
    const sessions = new SessionStore(handle.db, createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' }), { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 });
    logout = backchannelLogout({ db: handle.db, sessions, apps: new AppRegistry(parsed.apps), audit: new AuditLog(handle.db), log: silentLog, issuer: ISSUER, grants: new OpStore(handle.db), sign: keys.sign });
    logout.start();
    const { session } = await sessions.create({ userId: 'u1', identityId: 'i1', providerId: 'dev' });
    const grant = await seedGrant(handle.db, { appId: 'wiki', clientId: 'wiki-client', sessionId: session.id });
    await seedGrant(handle.db, { appId: 'notes', sessionId: session.id });
    await sessions.revoke(session.id, 'sign-out-everywhere');
    for (let i = 0; i < 500 && app.accepted.length === 0; i++) await sleep(10);
    expect(app.accepted).toEqual([expect.objectContaining({ path: '/backchannel', alg: 'ES256', aud: 'wiki-client', sid: grant.sid, sub: grant.subject })]);
    expect(app.rejected).toEqual([]);
    // The app has the token before the outbox records its answer: wait for the record.
    await expect.poll(() => logout!.deliveries.countsByApp()).toEqual([{ appId: 'wiki', pending: 0, delivered: 1, abandoned: 0 }]);
    await logout.stop();
    logout = undefined;
  });
});
