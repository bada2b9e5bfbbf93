import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, hkdfSync } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import * as oidc from 'openid-client';
import Provider, { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { opAdapterFactory } from '../../src/provide/adapter.js';
import { GRANT_RETENTION_MS, OpStore, opIdHash, type GrantToRecord } from '../../src/provide/opStore.js';
import type { DatabaseHandle } from '../../src/storage/database.js';
import type { Opener, SuiteOptions } from './storeSuite.js';

/**
 * The OpenID Provider's storage (provide/opStore.ts and the oidc-provider Adapter on it,
 * provide/adapter.ts), on whichever database `open` gives: storage/sqlite.test.ts and
 * storage/postgres.test.ts run it beside the store suite. Its last part runs a real oidc-provider on the
 * adapter (two of them, on two connection pools, where the database has them) and a real client.
 */

const T0 = 1_750_000_000_000;
const epoch = (ms: number) => Math.floor(ms / 1000);

/** Every model oidc-provider stores, with a payload of the shape it writes (its lib/models). */
function payloads(now: number, id: string): Record<string, AdapterPayload> {
  const iat = epoch(now);
  const exp = iat + 600;
  const token = { iat, exp, jti: id, clientId: 'wiki', accountId: 'ann', grantId: 'grant-1', scope: 'openid email', sessionUid: 'session-uid-1', expiresWithSession: true };
  return {
    Session: { iat, exp, jti: id, kind: 'Session', uid: 'session-uid-1', accountId: 'ann', loginTs: iat, authorizations: { wiki: { sid: 'sid-1', grantId: 'grant-1' } } },
    Interaction: {
      iat,
      exp,
      jti: id,
      kind: 'Interaction',
      returnTo: `https://gate.example/oidc/auth/${id}`,
      session: { accountId: 'ann', uid: 'session-uid-1', cookie: 'the-session-cookie-value' },
      params: { client_id: 'wiki', redirect_uri: 'https://wiki.example/cb' },
      prompt: { name: 'consent', reasons: [], details: {} },
      parJti: 'a-pushed-request-id',
    },
    Grant: { iat, exp, jti: id, kind: 'Grant', accountId: 'ann', clientId: 'wiki', openid: { scope: 'openid email' } },
    AuthorizationCode: { ...token, kind: 'AuthorizationCode', codeChallenge: 'c'.repeat(43), codeChallengeMethod: 'S256', redirectUri: 'https://wiki.example/cb' },
    AccessToken: { ...token, kind: 'AccessToken', gty: 'authorization_code' },
    RefreshToken: { ...token, kind: 'RefreshToken', gty: 'authorization_code', iiat: iat, rotations: 0 },
    PushedAuthorizationRequest: { iat, exp, jti: id, kind: 'PushedAuthorizationRequest', clientId: 'wiki', request: 'eyJhbGciOiJub25lIn0.eyJjbGllbnRfaWQiOiJ3aWtpIn0.' },
    ReplayDetection: { iat, exp, jti: id, kind: 'ReplayDetection', iss: 'wiki' },
    DeviceCode: { ...token, kind: 'DeviceCode', userCode: 'BCDF-GHJK', params: { client_id: 'wiki', scope: 'openid' } },
    BackchannelAuthenticationRequest: { ...token, kind: 'BackchannelAuthenticationRequest' },
    ClientCredentials: { iat, exp, jti: id, kind: 'ClientCredentials', clientId: 'wiki', scope: 'api' },
  };
}

async function thrown(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  return 'no error';
}

export function opStoreSuite(name: string, open: Opener, { realConcurrency }: SuiteOptions): void {
  describe(`OpenID Provider storage on ${name}`, () => {
    let handle: DatabaseHandle;
    let clock: number;
    const now = () => clock;
    let store: OpStore;
    let adapterFor: (model: string) => Adapter;

    beforeEach(async () => {
      handle = await open();
      clock = T0;
      store = new OpStore(handle.db, now);
      adapterFor = opAdapterFactory(store);
    });
    afterEach(async () => {
      await handle.close();
    });

    const dump = async () => JSON.stringify(await handle.db.selectFrom('op_payloads').selectAll().execute());

    describe('the adapter', () => {
      it('keeps and finds back every model oidc-provider stores, as it gave it', async () => {
        for (const [model, payload] of Object.entries(payloads(T0, 'id-of-the-row'))) {
          const adapter = adapterFor(model);
          await adapter.upsert(`${model}-id`, { ...payload, jti: `${model}-id` }, 600);
          expect(await adapter.find(`${model}-id`), model).toEqual({ ...payload, jti: `${model}-id` });
          expect(await adapter.find(`${model}-other`), model).toBeUndefined();
          // Saved again (oidc-provider re-saves Sessions, Interactions, Grants under one id): replaced;
          // but a replay marker, whose second save is the replay it is there to catch.
          const again = adapter.upsert(`${model}-id`, { ...payload, jti: `${model}-id`, accountId: 'bob' }, 600);
          if (model === 'ReplayDetection') {
            expect(await thrown(again)).toBeInstanceOf(errors.InvalidClientAuth);
            continue;
          }
          await again;
          expect((await adapter.find(`${model}-id`))?.accountId, model).toBe('bob');
        }
        // One model's id is not another's.
        expect(await adapterFor('AccessToken').find('RefreshToken-id')).toBeUndefined();
      });

      it('finds a Session by its uid and a DeviceCode by its user code', async () => {
        const all = payloads(T0, 'x');
        await adapterFor('Session').upsert('session-id', { ...all.Session!, jti: 'session-id' }, 600);
        const byUid = await adapterFor('Session').findByUid('session-uid-1');
        expect(byUid).toMatchObject({ uid: 'session-uid-1', accountId: 'ann', authorizations: { wiki: { sid: 'sid-1', grantId: 'grant-1' } } });
        expect(await adapterFor('Session').findByUid('another-uid')).toBeUndefined();

        await adapterFor('DeviceCode').upsert('device-code', { ...all.DeviceCode!, jti: 'device-code' }, 600);
        expect(await adapterFor('DeviceCode').findByUserCode('BCDF-GHJK')).toEqual({ ...all.DeviceCode, jti: 'device-code' });
        expect(await adapterFor('DeviceCode').findByUserCode('BCDF-GHJX')).toBeUndefined();
        // A DeviceCode found by its id and saved again (accepted by the person) keeps its user code.
        const found = (await adapterFor('DeviceCode').find('device-code'))!;
        await adapterFor('DeviceCode').upsert('device-code', { ...found, accountId: 'bob' }, 600);
        expect((await adapterFor('DeviceCode').findByUserCode('BCDF-GHJK'))?.accountId).toBe('bob');
      });

      it('keeps no id, user code or session cookie readable: ids and user codes hashed, payloads sealed under their own id', async () => {
        // Threat: a reader of the database (a backup, a replica, a leaked dump) presenting a code, token or
        // the OP's session cookie found in it.
        for (const [model, payload] of Object.entries(payloads(T0, 'x'))) {
          await adapterFor(model).upsert(`raw-id-of-a-${model}`, { ...payload, jti: `raw-id-of-a-${model}`, ...(model === 'Interaction' ? { returnTo: `https://gate.example/oidc/auth/raw-id-of-a-${model}` } : {}) }, 600);
        }
        const rows = await dump();
        expect(rows).not.toMatch(/raw-id-of-a-/);
        expect(rows).not.toContain('BCDF-GHJK');
        expect(rows).not.toContain('the-session-cookie-value');
        expect(rows).not.toContain('a-pushed-request-id');
        expect(rows).toContain(opIdHash('raw-id-of-a-AccessToken'));
        // The Session is in the clear (found by uid), but without its id.
        expect(rows).toContain('session-uid-1');
      });

      it('opens the rows written before payloads were sealed synchronously (a compact JWE under the same key), and writes only the new form', async () => {
        // Not lost at an upgrade: a refresh token issued before it still refreshes.
        const { jti: _jti, ...payload } = { ...payloads(T0, 'older').RefreshToken!, jti: 'older-id' };
        const key = new Uint8Array(hkdfSync('sha256', 'older-id', '', 'gatehouse op payload RefreshToken', 32));
        const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key);
        await store.savePayload('RefreshToken', 'older-id', { payload: JSON.stringify({ sealed: jwe }), grantId: payload.grantId as string, uid: undefined, userCode: undefined, expiresIn: 600, consumed: false });
        expect(await adapterFor('RefreshToken').find('older-id')).toEqual({ ...payload, jti: 'older-id' });
        await adapterFor('RefreshToken').upsert('newer-id', { ...payload, jti: 'newer-id' }, 600);
        expect(await dump()).toMatch(/\\"box\\":/);
      });

      it('opens a payload only as the model it was sealed for', async () => {
        // Threat: a database writer moving a sealed AccessToken payload into a RefreshToken row under the same id.
        await adapterFor('AccessToken').upsert('same-id', { ...payloads(T0, 'same').AccessToken!, jti: 'same-id' }, 600);
        const row = await store.findPayload('AccessToken', 'same-id');
        await store.savePayload('RefreshToken', 'same-id', { payload: row!.payload, grantId: undefined, uid: undefined, userCode: undefined, expiresIn: 600, consumed: false });
        expect(await adapterFor('RefreshToken').find('same-id')).toBeUndefined();
      });

      it('never finds a row past its expiry, purged yet or not', async () => {
        // Threat: a code or token used after its lifetime because the purge had not run yet.
        const adapter = adapterFor('AccessToken');
        await adapter.upsert('short', { ...payloads(T0, 'short').AccessToken!, jti: 'short' }, 60);
        clock = T0 + 59_999;
        expect(await adapter.find('short')).toBeDefined();
        clock = T0 + 60_000;
        expect(await adapter.find('short')).toBeUndefined();
        expect(await thrown(adapter.consume('short'))).toBeInstanceOf(errors.InvalidGrant);
        await adapterFor('Session').upsert('s', { ...payloads(T0, 's').Session!, jti: 's' }, 1);
        await adapterFor('DeviceCode').upsert('d', { ...payloads(T0, 'd').DeviceCode!, jti: 'd' }, 1);
        clock += 1000;
        expect(await adapterFor('Session').findByUid('session-uid-1')).toBeUndefined();
        expect(await adapterFor('DeviceCode').findByUserCode('BCDF-GHJK')).toBeUndefined();
      });

      it('consumes once; the second consume is refused as reuse and revokes the grant', async () => {
        // Threat: a stolen code (or refresh token) redeemed by the attacker and the client at the same
        // moment: both found it unused, so only the consume can tell; the loser's grant ends.
        const all = payloads(T0, 'x');
        const code = adapterFor('AuthorizationCode');
        await code.upsert('code-1', { ...all.AuthorizationCode!, jti: 'code-1' }, 60);
        await adapterFor('AccessToken').upsert('at-1', { ...all.AccessToken!, jti: 'at-1' }, 600);
        await adapterFor('Grant').upsert('grant-1', { ...all.Grant!, jti: 'grant-1' }, 600);
        await adapterFor('AccessToken').upsert('at-other', { ...all.AccessToken!, jti: 'at-other', grantId: 'grant-2' }, 600);
        await code.consume('code-1');
        expect((await code.find('code-1'))?.consumed).toBe(epoch(T0));
        const error = await thrown(code.consume('code-1'));
        expect(error).toBeInstanceOf(errors.InvalidGrant);
        expect(error).toMatchObject({ error: 'invalid_grant', error_description: 'grant request is invalid', error_detail: 'authorization code already consumed' });
        expect(await code.find('code-1')).toBeUndefined();
        expect(await adapterFor('AccessToken').find('at-1')).toBeUndefined();
        expect(await adapterFor('Grant').find('grant-1')).toBeUndefined();
        expect(await adapterFor('AccessToken').find('at-other')).toBeDefined();
        // A refresh token rotated twice: oidc-provider's own wording for it.
        await adapterFor('RefreshToken').upsert('rt-1', { ...all.RefreshToken!, jti: 'rt-1', grantId: 'grant-3' }, 600);
        await adapterFor('RefreshToken').consume('rt-1');
        expect(await thrown(adapterFor('RefreshToken').consume('rt-1'))).toMatchObject({ error: 'invalid_grant', error_detail: 'refresh token already used' });
        // A pushed request used twice is an invalid request_uri, as oidc-provider answers it.
        await adapterFor('PushedAuthorizationRequest').upsert('par-1', { ...all.PushedAuthorizationRequest!, jti: 'par-1' }, 60);
        await adapterFor('PushedAuthorizationRequest').consume('par-1');
        expect(await thrown(adapterFor('PushedAuthorizationRequest').consume('par-1'))).toBeInstanceOf(errors.InvalidRequestUri);
        // A save of a copy read before the consume does not undo it.
        await adapterFor('DeviceCode').upsert('dc-1', { ...all.DeviceCode!, jti: 'dc-1' }, 600);
        const before = (await adapterFor('DeviceCode').find('dc-1'))!;
        await adapterFor('DeviceCode').consume('dc-1');
        await adapterFor('DeviceCode').upsert('dc-1', before, 600);
        expect((await adapterFor('DeviceCode').find('dc-1'))?.consumed).toBe(epoch(T0));
      });

      it('destroys one row, and revokes every code and token of a grant (not its Grant, not other grants)', async () => {
        const all = payloads(T0, 'x');
        for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode', 'BackchannelAuthenticationRequest']) {
          await adapterFor(model).upsert(`${model}-a`, { ...all[model]!, jti: `${model}-a` }, 600);
          await adapterFor(model).upsert(`${model}-b`, { ...all[model]!, jti: `${model}-b`, grantId: 'grant-2' }, 600);
        }
        await adapterFor('Grant').upsert('grant-1', { ...all.Grant!, jti: 'grant-1' }, 600);
        await adapterFor('Interaction').upsert('int-1', { ...all.Interaction!, jti: 'int-1', grantId: 'grant-1' }, 600);
        await adapterFor('AccessToken').destroy('AccessToken-b');
        expect(await adapterFor('AccessToken').find('AccessToken-b')).toBeUndefined();
        await adapterFor('RefreshToken').revokeByGrantId('grant-1');
        for (const model of ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode', 'BackchannelAuthenticationRequest']) {
          expect(await adapterFor(model).find(`${model}-a`), model).toBeUndefined();
        }
        expect(await adapterFor('RefreshToken').find('RefreshToken-b')).toBeDefined();
        // oidc-provider destroys the Grant itself when its policy says so (the revocation endpoint keeps it).
        expect(await adapterFor('Grant').find('grant-1')).toBeDefined();
        expect(await adapterFor('Interaction').find('int-1')).toBeDefined();
      });

      it('refuses to keep clients or anything of dynamic registration', () => {
        // Threat: a client registering itself (or one kept in two places that disagree): clients are apps.
        expect(() => adapterFor('Client')).toThrow(/app catalogue/);
        expect(() => adapterFor('RegistrationAccessToken')).toThrow(/dynamic client registration/);
        expect(() => adapterFor('InitialAccessToken')).toThrow(/dynamic client registration/);
        const clients: Adapter = { upsert: async () => {}, find: async () => undefined, findByUid: async () => undefined, findByUserCode: async () => undefined, consume: async () => {}, destroy: async () => {}, revokeByGrantId: async () => {} };
        expect(opAdapterFactory(store, { clients })('Client')).toBe(clients);
      });
    });

    describe('grants', () => {
      const grant = (id: string, extra: Partial<GrantToRecord> = {}): GrantToRecord => ({
        grantId: id,
        clientId: 'wiki',
        appId: 'wiki',
        userId: 'ann',
        sessionId: 'session-1',
        sid: `sid-${id}`,
        subject: 'sub-ann',
        scopes: ['openid', 'email'],
        expiresAt: T0 + 3_600_000,
        ...extra,
      });

      it('records a grant, updates it when used again, and lists the live ones', async () => {
        expect(await store.recordGrant(grant('g1'))).toMatchObject({ grantId: 'g1', sessionId: 'session-1', scopes: ['openid', 'email'], createdAt: T0, lastUsedAt: T0, revokedAt: null });
        clock = T0 + 1000;
        expect(await store.recordGrant(grant('g1', { scopes: ['openid', 'email', 'groups'], expiresAt: T0 + 7_200_000 }))).toMatchObject({ createdAt: T0, lastUsedAt: T0 + 1000, scopes: ['openid', 'email', 'groups'], expiresAt: T0 + 7_200_000 });
        await store.touchGrant('g1', T0 + 2000);
        expect((await store.grant('g1'))?.lastUsedAt).toBe(T0 + 2000);
        expect(await store.grant('nope')).toBeUndefined();
        await store.recordGrant(grant('g2', { sessionId: 'session-2' }));
        await store.recordGrant(grant('g3', { sessionId: 'session-3', userId: 'bob' }));
        await store.recordGrant(grant('g4', { expiresAt: T0 + 1500 }));
        clock = T0 + 1500;
        expect((await store.liveGrantsOfSessions(['session-1', 'session-2'])).map((g) => g.grantId)).toEqual(['g1', 'g2']);
        expect((await store.liveGrantsOfUser('ann')).map((g) => g.grantId)).toEqual(['g1', 'g2']);
        expect(await store.liveGrantsOfSessions([])).toEqual([]);
      });

      it('pages an app’s grants in code-point order', async () => {
        const ids = ['g_b', 'g-b', 'g.b', 'g+b', 'g~', 'g0', 'ga', 'gB'];
        for (const id of ids) await store.recordGrant(grant(id));
        await store.recordGrant(grant('other', { appId: 'blog', clientId: 'blog' }));
        const paged: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.grantsOfApp('wiki', { after, limit: 3 });
          if (page.length === 0) break;
          paged.push(...page.map((g) => g.grantId));
          after = page.at(-1)!.grantId;
        }
        expect(paged).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
      });

      it('revokes grants with their codes and tokens in one go, once', async () => {
        // Threat: a session ended (sign-out, revocation, suspension) whose apps' tokens go on working.
        const all = payloads(T0, 'x');
        await store.recordGrant(grant('g1'));
        await store.recordGrant(grant('g2', { sessionId: 'session-2' }));
        await store.recordGrant(grant('g3', { userId: 'bob', sessionId: 'session-3' }));
        for (const id of ['g1', 'g2', 'g3']) {
          await adapterFor('Grant').upsert(id, { ...all.Grant!, jti: id }, 600);
          await adapterFor('RefreshToken').upsert(`rt-${id}`, { ...all.RefreshToken!, jti: `rt-${id}`, grantId: id }, 600);
        }
        clock = T0 + 5;
        const revoked = await store.revokeGrants({ sessionIds: ['session-1', 'session-2'] }, 'sign-out');
        expect(revoked.map((g) => [g.grantId, g.revokedAt, g.revokedReason])).toEqual([
          ['g1', T0 + 5, 'sign-out'],
          ['g2', T0 + 5, 'sign-out'],
        ]);
        expect(await adapterFor('RefreshToken').find('rt-g1')).toBeUndefined();
        expect(await adapterFor('Grant').find('g2')).toBeUndefined();
        expect(await adapterFor('RefreshToken').find('rt-g3')).toBeDefined();
        expect(await store.revokeGrants({ sessionIds: ['session-1', 'session-2'] }, 'sign-out')).toEqual([]);
        expect(await store.revokeGrants({ grantIds: ['g1'] }, 'again')).toEqual([]);
        expect((await store.grant('g1'))?.revokedReason).toBe('sign-out');
        // A revoked grant used again is not brought back.
        await store.recordGrant(grant('g1'));
        expect((await store.grant('g1'))?.revokedAt).toBe(T0 + 5);
        expect(await store.liveGrantsOfUser('ann')).toEqual([]);
        expect((await store.revokeGrants({ userId: 'bob' }, 'suspended')).map((g) => g.grantId)).toEqual(['g3']);
        expect(await adapterFor('Grant').find('g3')).toBeUndefined();
        await store.recordGrant(grant('g4', { appId: 'blog' }));
        await store.recordGrant(grant('g5'));
        expect((await store.revokeGrants({ appId: 'blog' }, 'app-removed')).map((g) => g.grantId)).toEqual(['g4']);
        expect((await store.revokeGrants({ grantIds: ['g5', 'unknown'] }, 'revoked-by-user')).map((g) => g.grantId)).toEqual(['g5']);
      });

      it('revokes many sessions’ grants past the size of one statement’s list', async () => {
        const sessionIds = Array.from({ length: 1203 }, (_, index) => `s${index}`);
        await handle.db
          .insertInto('op_grants')
          .values(sessionIds.map((sessionId, index) => ({ grant_id: `g${index}`, client_id: 'wiki', app_id: 'wiki', user_id: 'ann', session_id: sessionId, sid: 'x', subject: 'x', scopes: 'openid', created_at: T0, last_used_at: T0, expires_at: T0 + 1000, revoked_at: null, revoked_reason: null })))
          .execute();
        expect(await store.liveGrantsOfSessions(sessionIds)).toHaveLength(1203);
        expect(await store.revokeGrants({ sessionIds }, 'sign-out-everywhere')).toHaveLength(1203);
      });
    });

    it('purges expired payloads, and grants ended more than the retention ago', async () => {
      const all = payloads(T0, 'x');
      await adapterFor('AccessToken').upsert('old', { ...all.AccessToken!, jti: 'old' }, 60);
      await adapterFor('AccessToken').upsert('new', { ...all.AccessToken!, jti: 'new' }, 600);
      await store.recordGrant({ grantId: 'revoked', clientId: 'wiki', appId: 'wiki', userId: 'ann', sessionId: 's', sid: 'x', subject: 'x', scopes: ['openid'], expiresAt: T0 + GRANT_RETENTION_MS * 3 });
      await store.recordGrant({ grantId: 'expired', clientId: 'wiki', appId: 'wiki', userId: 'ann', sessionId: 's', sid: 'x', subject: 'x', scopes: ['openid'], expiresAt: T0 + 1000 });
      await store.recordGrant({ grantId: 'live', clientId: 'wiki', appId: 'wiki', userId: 'ann', sessionId: 't', sid: 'x', subject: 'x', scopes: ['openid'], expiresAt: T0 + GRANT_RETENTION_MS * 3 });
      await store.revokeGrants({ grantIds: ['revoked'] }, 'sign-out');
      expect(await store.purgeExpired(T0 + 60_000)).toEqual({ payloads: 1, grants: 0 });
      expect(await store.purgeExpired(T0 + GRANT_RETENTION_MS)).toEqual({ payloads: 1, grants: 1 });
      expect(await store.purgeExpired(T0 + GRANT_RETENTION_MS + 1000)).toEqual({ payloads: 0, grants: 1 });
      expect((await handle.db.selectFrom('op_grants').select('grant_id').execute()).map((row) => row.grant_id)).toEqual(['live']);
    });

    describe(`races${realConcurrency ? ' (two connection pools: two nodes)' : ' (one connection: requests of one node)'}`, () => {
      let second: DatabaseHandle;
      beforeEach(async () => {
        second = realConcurrency ? await open.sibling!(handle) : handle;
      });
      afterEach(async () => {
        if (second !== handle) await second.close();
      });

      it('one code or refresh token consumed by two nodes at once: exactly one wins, every time', async () => {
        // Threat: two nodes redeeming one code (or rotating one refresh token) both issuing tokens.
        const adapters = [opAdapterFactory(store), opAdapterFactory(new OpStore(second.db, now))];
        const all = payloads(T0, 'x');
        for (let round = 0; round < 40; round++) {
          const model = round % 2 === 0 ? 'AuthorizationCode' : 'RefreshToken';
          await adapters[0]!(model).upsert(`code-${round}`, { ...all[model]!, jti: `code-${round}`, grantId: `grant-${round}` }, 60);
          const outcomes = await Promise.allSettled(adapters.flatMap((factory) => [factory(model).consume(`code-${round}`), factory(model).consume(`code-${round}`)]));
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(errors.InvalidGrant);
        }
      });

      it('two nodes ending overlapping grants at once: each grant revoked (and handed back for its logout token) once', async () => {
        // Threat: two logout tokens for one grant (each revocation hands back what it revoked), or one left live.
        const stores = [store, new OpStore(second.db, now)];
        for (let round = 0; round < 10; round++) {
          for (let index = 0; index < 6; index++) {
            await store.recordGrant({ grantId: `g${round}-${index}`, clientId: 'wiki', appId: 'wiki', userId: `u${round}`, sessionId: `s${round}-${index % 3}`, sid: 'x', subject: 'x', scopes: ['openid'], expiresAt: T0 + 3_600_000 });
          }
          const results = await Promise.all([
            stores[0]!.revokeGrants({ userId: `u${round}` }, 'suspended'),
            stores[1]!.revokeGrants({ sessionIds: [`s${round}-2`, `s${round}-1`] }, 'sign-out-everywhere'),
            stores[1]!.revokeGrants({ grantIds: [`g${round}-5`, `g${round}-0`] }, 'revoked-by-user'),
          ]);
          const ids = results.flat().map((grant) => grant.grantId);
          expect(ids.sort()).toEqual([0, 1, 2, 3, 4, 5].map((index) => `g${round}-${index}`));
        }
      });

      it('one client assertion recorded by two nodes at once: exactly one accepts it', async () => {
        // Threat: a captured private_key_jwt assertion replayed to a second node in the same moment
        // (oidc-provider looks for the jti, then saves it: both nodes would find nothing).
        const factories = [opAdapterFactory(store), opAdapterFactory(new OpStore(second.db, now))];
        for (let round = 0; round < 20; round++) {
          const payload = { iat: epoch(clock), exp: epoch(clock) + 60, jti: `jti-${round}`, kind: 'ReplayDetection', iss: 'wiki' };
          const outcomes = await Promise.allSettled(factories.flatMap((factory) => [factory('ReplayDetection').upsert(`jti-${round}`, payload, 60), factory('ReplayDetection').upsert(`jti-${round}`, payload, 60)]));
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ error: 'invalid_client' });
        }
        // Once expired (and not purged yet) the same value may be recorded again.
        clock += 60_000;
        await factories[1]!('ReplayDetection').upsert('jti-0', { iat: epoch(clock), exp: epoch(clock) + 60, jti: 'jti-0', kind: 'ReplayDetection', iss: 'wiki' }, 60);
        expect(await factories[0]!('ReplayDetection').find('jti-0')).toMatchObject({ iss: 'wiki' });
      });

      it('a real authorization code + PKCE flow and refresh rotation, on oidc-provider over this storage', async () => {
        // Threats covered: codes and tokens readable in the database; a code redeemed twice (once per
        // node); a rotated refresh token replayed. The provider is the minimum a flow needs (the real
        // configuration is provide/'s): one client, a fixed account, login and consent granted at once.
        const nodes = [await startProvider(new OpStore(handle.db)), await startProvider(new OpStore(second.db))];
        try {
          const [one, two] = nodes as [TestProvider, TestProvider];
          const clientOf = async (node: TestProvider) => oidc.discovery(new URL(one.issuer), CLIENT.client_id, CLIENT.client_secret, undefined, { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: rewriteTo(node) });
          const config = await clientOf(one);
          const jar = new Map<string, string>();
          const authorize = async () => {
            const verifier = oidc.randomPKCECodeVerifier();
            const state = oidc.randomState();
            const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CLIENT.redirect_uris[0]!, scope: 'openid offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent' });
            return { callback: await browse(url, jar, one.origin), verifier, state };
          };

          const first = await authorize();
          const tokens = await oidc.authorizationCodeGrant(config, first.callback, { pkceCodeVerifier: first.verifier, expectedState: first.state });
          expect(tokens.claims()?.sub).toBe('ann');
          expect(tokens.refresh_token).toBeTruthy();
          // The same code again, on the other node: refused, and the grant's tokens with it.
          const code = first.callback.searchParams.get('code')!;
          const replay = await tokenRequest(two, { grant_type: 'authorization_code', code, redirect_uri: CLIENT.redirect_uris[0]!, code_verifier: first.verifier });
          expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
          expect((await tokenRequest(one, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! })).body.error).toBe('invalid_grant');

          // A new authorization; its code sent to both nodes at the same moment: exactly one answer has tokens.
          const second = await authorize();
          const racedCode = second.callback.searchParams.get('code')!;
          const raced = await Promise.all(nodes.map((node) => tokenRequest(node, { grant_type: 'authorization_code', code: racedCode, redirect_uri: CLIENT.redirect_uris[0]!, code_verifier: second.verifier })));
          expect(raced.map((answer) => answer.status).sort()).toEqual([200, 400]);
          expect(raced.find((answer) => answer.status === 400)?.body.error).toBe('invalid_grant');

          // Refresh rotation, one node then the other; the rotated token replayed ends the grant.
          const third = await authorize();
          const issued = await oidc.authorizationCodeGrant(config, third.callback, { pkceCodeVerifier: third.verifier, expectedState: third.state });
          const rotated = await oidc.refreshTokenGrant(await clientOf(two), issued.refresh_token!);
          expect(rotated.refresh_token).toBeTruthy();
          expect(rotated.refresh_token).not.toBe(issued.refresh_token);
          const again = await oidc.refreshTokenGrant(config, rotated.refresh_token!);
          // Threat: a reader of the database presenting what it finds there. Here, with a live grant (its
          // Grant, consumed code, tokens) and the OP's session, none of the values the flow saw is in it.
          const rowsOf = async () => JSON.stringify(await handle.db.selectFrom('op_payloads').selectAll().execute());
          const live = await rowsOf();
          expect((JSON.parse(live) as Array<{ model: string }>).map((row) => row.model)).toEqual(expect.arrayContaining(['Session', 'Grant', 'AuthorizationCode', 'AccessToken', 'RefreshToken']));
          for (const secret of [third.callback.searchParams.get('code')!, issued.access_token, issued.refresh_token!, rotated.refresh_token!, rotated.access_token, again.refresh_token!, again.access_token, ...jar.values()]) {
            expect(secret.length).toBeGreaterThanOrEqual(16);
            expect(live).not.toContain(secret);
          }
          expect((await tokenRequest(two, { grant_type: 'refresh_token', refresh_token: issued.refresh_token! })).body).toMatchObject({ error: 'invalid_grant', error_description: 'grant request is invalid' });
          expect((await tokenRequest(one, { grant_type: 'refresh_token', refresh_token: again.refresh_token! })).body.error).toBe('invalid_grant');
          // Two nodes rotating one refresh token at once: exactly one new refresh token.
          const fourth = await authorize();
          const fresh = await oidc.authorizationCodeGrant(config, fourth.callback, { pkceCodeVerifier: fourth.verifier, expectedState: fourth.state });
          const rotations = await Promise.all(nodes.map((node) => tokenRequest(node, { grant_type: 'refresh_token', refresh_token: fresh.refresh_token! })));
          expect(rotations.map((answer) => answer.status).sort()).toEqual([200, 400]);
          // The loser's revocation took the Grant: what the winner issued (saved before or after it) is dead too.
          const winner = rotations.find((answer) => answer.status === 200)!.body;
          expect((await tokenRequest(one, { grant_type: 'refresh_token', refresh_token: winner.refresh_token! })).body.error).toBe('invalid_grant');
          expect((await fetch(`${two.origin}/me`, { headers: { authorization: `Bearer ${winner.access_token!}` } })).status).toBe(401);

          // And at the end: no code, token or cookie value the flow saw (the OP's session and
          // interaction cookies included) is in any row left.
          const rows = await rowsOf();
          const secrets = [code, racedCode, tokens.access_token, tokens.refresh_token!, issued.refresh_token!, rotated.refresh_token!, rotated.access_token, again.refresh_token!, fresh.refresh_token!, winner.refresh_token!, winner.access_token!, ...jar.values()];
          expect(secrets.filter((value) => value.length >= 16)).toHaveLength(secrets.length);
          for (const secret of secrets) expect(rows).not.toContain(secret);
        } finally {
          for (const node of nodes) await node.close();
        }
      }, 30_000);
    });
  });
}

// ---- a minimum oidc-provider, in process ---------------------------------------------------------

const CLIENT = {
  client_id: 'wiki',
  client_secret: 'a-test-secret-of-the-wiki-client-0123456789',
  redirect_uris: ['https://wiki.example/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code' as const],
};

interface TestProvider {
  issuer: string;
  /** The node's own address (both nodes share the one issuer, as a cluster does behind its load balancer). */
  origin: string;
  close(): Promise<void>;
}

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
const ISSUER = 'http://op.test';

async function startProvider(store: OpStore): Promise<TestProvider> {
  const provider = new Provider(ISSUER, {
    adapter: opAdapterFactory(store),
    clients: [CLIENT],
    jwks: { keys: [{ ...signingKey, kid: 'test', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['a-test-cookie-key-0123456789abcdef'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    // Lifetimes of its own (oidc-provider's defaults are functions it asks to be replaced), in seconds.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, RefreshToken: 3600, Session: 3600 },
    issueRefreshToken: () => true,
    rotateRefreshToken: true,
    pkce: { required: () => true },
  });
  provider.on('server_error', (_ctx, error) => console.error(error));
  const server: Server = createServer((req, res) => void handle(provider, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    issuer: ISSUER,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The login step of the test: Ann signs in and consents to everything asked, at once. */
async function handle(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!req.url?.startsWith('/interaction/')) return provider.callback()(req, res);
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'ann' } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId ? (await provider.Grant.find(details.grantId))! : new provider.Grant({ accountId: 'ann', clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

/** openid-client's requests to the issuer, sent to one node. */
function rewriteTo(node: TestProvider): typeof fetch {
  return (input, init) => fetch(String(input instanceof Request ? input.url : input).replace(ISSUER, node.origin), init);
}

/** A browser's trip from the authorization URL to the client's callback, cookies kept, on node one's address. */
async function browse(start: URL, jar: Map<string, string>, origin: string): Promise<URL> {
  let url = start.href.replace(ISSUER, origin);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
      else jar.set(name, value);
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization stopped at ${response.status}: ${await response.text()}`);
    const next = new URL(location, ISSUER);
    if (next.href.startsWith(CLIENT.redirect_uris[0]!)) return next;
    url = next.href.replace(ISSUER, origin);
  }
  throw new Error('too many redirects');
}

async function tokenRequest(node: TestProvider, body: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`${node.origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}` },
    body: new URLSearchParams(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}
