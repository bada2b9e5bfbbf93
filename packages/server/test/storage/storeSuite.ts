import type { FastifyBaseLogger } from 'fastify';
import type { DiscoveryPreview } from '@gatehouse/contract';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/accounts/accountStore.js';
import type { IdentityProfile } from '../../src/accounts/identityProfile.js';
import { OPEN_ORGANIZATION } from '../../src/accounts/admission.js';
import { SignInSettingsStore } from '../../src/accounts/signInSettings.js';
import { UserDirectory } from '../../src/accounts/userDirectory.js';
import { AuditLog } from '../../src/audit/auditLog.js';
import { LogoutTokenStore } from '../../src/authenticate/logoutTokenStore.js';
import { ProviderRegistry } from '../../src/providers/providerRegistry.js';
import { ProviderStore } from '../../src/providers/providerStore.js';
import { SignInAttempts } from '../../src/authenticate/signInAttempts.js';
import { AppRegistry } from '../../src/apps/appRegistry.js';
import { AppStore } from '../../src/apps/appStore.js';
import { SigningKeys } from '../../src/keys/signingKeys.js';
import type { Config } from '../../src/config/schema.js';
import { AppError } from '../../src/errors.js';
import { AppSessions } from '../../src/sessions/appSessions.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { hashSecret } from '../../src/sessions/sessionToken.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import type { DatabaseHandle, Db } from '../../src/storage/database.js';
import { purgeLogoutTokenJtis } from '../../src/storage/purge.js';

/**
 * The storage contract, written once: every store's operations, and the races two nodes (or two
 * requests on one node) can run into, against whichever database `open` gives — a new, empty,
 * migrated one for each test. storage/sqlite.test.ts and storage/postgres.test.ts run it.
 */

const log = pino({ level: 'silent' });
const cipher = createTokenCipher({ encryptionKeys: new Map([['k1', Buffer.alloc(32, 7)]]), currentKeyId: 'k1' });
const timeouts = { idleTimeout: 3_600_000, absoluteLifetime: 86_400_000, touchInterval: 60_000 };
const T0 = 1_750_000_000_000; // epoch ms past 2^32: bigint columns, read back as numbers

const provider = { id: 'corp', name: 'Corp', allowedDomains: [], createUsers: true, trustEmail: false };
const trusting = { ...provider, id: 'partner', name: 'Partner', trustEmail: true };
const admins = (emails: string[] = []): Config['admins'] => ({ emails, groups: [] }) as unknown as Config['admins'];
const noGroups = { get: () => undefined };

function profile(subject: string, email: string | undefined, extra: Partial<IdentityProfile> = {}): IdentityProfile {
  return { subject, email, emailVerified: true, name: email?.split('@')[0], picture: undefined, groups: [], sid: undefined, extra: {}, ...extra };
}

async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return 'no error';
}

/**
 * Emails (and ids) that a language's collation orders otherwise than code points do: ICU's en-US puts
 * `_` before `-` before `.` before `+` before `~` before digits; code points put `+`, `-`, `.`, digits,
 * `_`, letters and then `~`.
 */
const ORDER_PROBES = ['a_b', 'a-b', 'a.b', 'a+b', 'a~', 'a0', 'aa'];

/**
 * The console's user list is in one order on every database and server: by email, then id, both in
 * code points. Two users share an email here (the tie-breaker decides), with ids a collation reorders.
 */
export async function expectUsersInCodePointOrder(db: Db, now: () => number): Promise<void> {
  const row = (id: string, email: string) => ({ id, email, name: email, picture: null, status: 'active' as const, roles: '[]', primary_identity_id: null, created_at: now(), updated_at: now(), last_sign_in_at: null });
  await db.insertInto('users').values([...ORDER_PROBES.map((local, index) => row(`u${index}`, `${local}@corp.example`)), ...ORDER_PROBES.map((local) => row(`t${local}`, 'same@corp.example'))]).execute();
  const directory = new UserDirectory(db, admins(), noGroups, now);
  const { users } = await directory.search({}, 1, 100);
  const expected = [...ORDER_PROBES.map((local) => `${local}@corp.example`), 'same@corp.example'].sort(byCodePoint);
  expect([...new Set(users.map((user) => user.email))]).toEqual(expected);
  expect(users.filter((user) => user.email === 'same@corp.example').map((user) => user.id)).toEqual(ORDER_PROBES.map((local) => `t${local}`).sort(byCodePoint));
  // Paging walks the same order.
  const paged = [];
  for (let page = 1; page <= 5; page++) paged.push(...(await directory.search({}, page, 3)).users.map((user) => user.id));
  expect(paged).toEqual(users.map((user) => user.id));
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The console's user search matches the same users on every database and server: case-insensitive in
 * ASCII only. SQLite's lower() folds A-Z only, PostgreSQL's all of Unicode under a language's locale
 * (ICU, en_US.UTF-8) and A-Z only under C: "élodie" found "Élodie" on one and not on the other. Names and
 * emails with accented capitals, a Turkish dotted İ, a German ß, and an email stored with capitals.
 */
export async function expectSearchAlikeEverywhere(db: Db, now: () => number): Promise<void> {
  const row = (id: string, email: string, name: string) => ({ id, email, name, picture: null, status: 'active' as const, roles: '[]', primary_identity_id: null, created_at: now(), updated_at: now(), last_sign_in_at: null });
  await db
    .insertInto('users')
    .values([
      row('u1', 'elodie@corp.example', 'Élodie Durand'),
      row('u2', 'em@corp.example', 'élodie martin'),
      row('u3', 'ozgur@corp.example', 'ÖZGÜR Şahin'),
      row('u4', 'ANN@Corp.Example', 'Ann'),
      row('u5', 'strasse@corp.example', 'Straße'),
      row('u6', 'ipek@corp.example', 'İpek'),
      row('u7', 'jürgen@corp.example', 'JÜRGEN'),
    ])
    .execute();
  const directory = new UserDirectory(db, admins(), noGroups, now);
  const found = async (query: string) => (await directory.search({ query }, 1, 50)).users.map((user) => user.id).sort();
  const expected: Array<[string, string[]]> = [
    // A-Z are one letter whatever their case...
    ['ann', ['u4']],
    ['CORP.EXAMPLE', ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']],
    ['lodie', ['u1', 'u2']],
    ['STRASSE', ['u5']],
    ['ipek', ['u6']],
    ['Jürgen', ['u7']],
    // ...other letters are matched as they are written, on both databases alike.
    ['élodie', ['u2']],
    ['ÉLODIE', ['u1']],
    ['özgür', []],
    ['ÖZGÜR', ['u3']],
    ['straße', ['u5']],
    ['İPEK', ['u6']],
    ['jürgen', ['u7']],
    ['JÜRGEN', ['u7']],
  ];
  const answers: Array<[string, string[]]> = [];
  for (const [query] of expected) answers.push([query, await found(query)]);
  expect(answers).toEqual(expected);
}

export interface SuiteOptions {
  /** Whether the concurrency cases mean something here (two connections racing). */
  realConcurrency: boolean;
}

export function storeSuite(name: string, open: Opener, { realConcurrency }: SuiteOptions): void {
  describe(`storage contract on ${name}`, () => {
    let handle: DatabaseHandle;
    let clock: number;
    const now = () => clock;
    let accounts: AccountStore;

    beforeEach(async () => {
      handle = await open();
      clock = T0;
      accounts = new AccountStore(handle.db, now);
    });
    afterEach(async () => {
      await handle.close();
    });

    const signUp = (subject: string, email: string, via = provider) => accounts.signIn(via, profile(subject, email), OPEN_ORGANIZATION);

    describe('accounts', () => {
      it('creates a user on first sign-in, finds them again, and keeps the primary identity current', async () => {
        const first = await signUp('s1', 'ann@corp.example');
        expect(first.user).toMatchObject({ email: 'ann@corp.example', name: 'ann', status: 'active', roles: '[]', created_at: T0, last_sign_in_at: T0 });
        expect(first.user.primary_identity_id).toBe(first.identity.id);
        expect(typeof first.user.created_at).toBe('number');
        clock += 1000;
        const again = await accounts.signIn(provider, profile('s1', 'ann.new@corp.example', { name: 'Ann B' }), OPEN_ORGANIZATION);
        expect(again.user.id).toBe(first.user.id);
        const stored = await accounts.getUser(first.user.id);
        expect(stored).toMatchObject({ email: 'ann.new@corp.example', name: 'Ann B', last_sign_in_at: T0 + 1000 });
        expect(typeof stored!.last_sign_in_at).toBe('number');
        expect(await accounts.findIdentity('corp', 's1')).toMatchObject({ user_id: first.user.id, email_verified: 1, last_used_at: T0 + 1000 });
        expect(await accounts.getIdentity(first.identity.id)).toMatchObject({ subject: 's1' });
      });

      it('refuses or links a second identity with the same email by the rules', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        expect(await failure(signUp('other', 'ann@corp.example'))).toBe('identity_conflict');
        // Linked later: listed after (identities of one moment are in the order of their ids).
        clock += 1000;
        const linked = await signUp('p1', 'ann@corp.example', trusting);
        expect(linked.user.id).toBe(ann.user.id);
        expect((await accounts.listIdentities(ann.user.id)).map((identity) => identity.provider_id)).toEqual(['corp', 'partner']);
      });

      it('previews a sign-in without writing', async () => {
        expect(await accounts.previewSignIn(provider, profile('s1', 'ann@corp.example'), OPEN_ORGANIZATION)).toMatchObject({ kind: 'create' });
        expect(await accounts.countUsers()).toBe(0);
      });

      it('links and unlinks identities, never the last one', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const { identity } = await accounts.link(ann.user.id, { ...provider, id: 'other' }, profile('o1', 'ann@other.example'), OPEN_ORGANIZATION);
        expect(identity.user_id).toBe(ann.user.id);
        expect(await failure(accounts.link(ann.user.id, provider, profile('s1', 'ann@corp.example'), OPEN_ORGANIZATION))).toBe('no error');
        const removed = await accounts.unlink(ann.user.id, ann.identity.id);
        expect(removed?.id).toBe(ann.identity.id);
        expect((await accounts.getUser(ann.user.id))!.primary_identity_id).toBeNull();
        expect(await accounts.unlink(ann.user.id, 'nope')).toBeUndefined();
        expect(await failure(accounts.unlink(ann.user.id, identity.id))).toBe('last_identity');
      });

      it('re-checks claims as a sign-in would judge them, keeping them without counting a sign-in', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        clock += 5000;
        const updated = await accounts.recheck(ann.identity, provider, profile('s1', 'ann@corp.example', { name: 'Ann C', groups: ['staff'] }), OPEN_ORGANIZATION);
        expect(updated).toMatchObject({ kind: 'admitted', account: { user: { name: 'Ann C' } } });
        const stored = await accounts.getUser(ann.user.id);
        expect(stored).toMatchObject({ name: 'Ann C', last_sign_in_at: T0, updated_at: T0 + 5000 });
        expect(JSON.parse((await accounts.getIdentity(ann.identity.id))!.claims)).toMatchObject({ groups: ['staff'] });
      });

      // Threat: a claims re-check adopting what a fresh sign-in would refuse (issue #25's high): an
      // unverified email, a domain the rules refuse, another user's address. Nothing of it is kept.
      it('a re-check the sign-in rules refuse keeps nothing: unverified, another domain, another user’s address', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const bob = await signUp('s2', 'bob@corp.example');
        const narrow = { ...provider, allowedDomains: ['corp.example'] };
        const cases: Array<[IdentityProfile, string]> = [
          [profile('s1', 'bob@corp.example', { emailVerified: false }), 'email_unverified'],
          [profile('s1', 'ann@elsewhere.example'), 'domain_not_allowed_by_provider'],
          [profile('s1', 'bob@corp.example'), 'email_of_another_user'],
        ];
        for (const [answer, reason] of cases) {
          expect(await accounts.recheck(ann.identity, narrow, answer, OPEN_ORGANIZATION)).toMatchObject({ kind: 'refused', reason });
        }
        expect((await accounts.getUser(ann.user.id))!.email).toBe('ann@corp.example');
        expect((await accounts.getIdentity(ann.identity.id))!.email).toBe('ann@corp.example');
        expect((await accounts.getUser(bob.user.id))!.email).toBe('bob@corp.example');
        // The organisation's own list judges it too.
        expect(await accounts.recheck(ann.identity, provider, profile('s1', 'ann@corp.example'), { allowedDomains: ['other.example'], createUsers: true })).toMatchObject({
          kind: 'refused',
          reason: 'domain_not_allowed_by_organization',
        });
      });

      it('a re-check keeps the facts an answer did not carry (a refresh without an ID token)', async () => {
        const google = { ...provider, kind: 'google' as const, hostedDomains: ['corp.example'] };
        const ann = await accounts.signIn(google, profile('g1', 'ann@corp.example', { facts: { hostedDomain: 'corp.example' } }), OPEN_ORGANIZATION);
        expect(await accounts.recheck(ann.identity, google, profile('g1', 'ann@corp.example'), OPEN_ORGANIZATION)).toMatchObject({ kind: 'admitted' });
        expect(JSON.parse((await accounts.getIdentity(ann.identity.id))!.claims)).toMatchObject({ facts: { hostedDomain: 'corp.example' } });
        // An answer that says the account is no longer of the Workspace: refused.
        expect(await accounts.recheck(ann.identity, google, profile('g1', 'ann@corp.example', { facts: { hostedDomain: null } }), OPEN_ORGANIZATION)).toMatchObject({
          kind: 'refused',
          reason: 'hosted_domain_not_allowed',
        });
      });

      it('counts identities per provider and users; sets status and roles; maps ids to emails', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const bob = await signUp('s2', 'bob@corp.example');
        await accounts.link(bob.user.id, trusting, profile('p2', 'bob@corp.example'), OPEN_ORGANIZATION);
        expect(await accounts.identityCounts()).toEqual(new Map([['corp', 2], ['partner', 1]]));
        expect(await accounts.countUsers()).toBe(2);
        await accounts.setStatus(ann.user.id, 'suspended');
        await accounts.setRoles(bob.user.id, ['admin', 'ops']);
        expect((await accounts.getUser(ann.user.id))!.status).toBe('suspended');
        expect(JSON.parse((await accounts.getUser(bob.user.id))!.roles)).toEqual(['admin', 'ops']);
        expect(await accounts.emailsOf([ann.user.id, bob.user.id, 'ghost'])).toEqual(new Map([[ann.user.id, 'ann@corp.example'], [bob.user.id, 'bob@corp.example']]));
        expect(await accounts.emailsOf([])).toEqual(new Map());
        expect(await failure(signUp('s1', 'ann@corp.example'))).toBe('account_suspended');
      });
    });

    describe('user directory', () => {
      it('searches by email or name (wildcards literal), filters by status, pages, counts sessions', async () => {
        for (const [index, who] of ['ann', 'bob', 'cat', 'dan', 'eve_50%'].entries()) {
          await signUp(`s${index}`, `${who.replace('%', '')}@corp.example`);
        }
        const directory = new UserDirectory(handle.db, admins(), noGroups, now);
        const all = await directory.search({}, 1, 2);
        expect(all.total).toBe(5);
        expect(all.users.map((user) => user.email)).toEqual(['ann@corp.example', 'bob@corp.example']);
        expect((await directory.search({}, 3, 2)).users.map((user) => user.email)).toEqual(['eve_50@corp.example']);
        expect((await directory.search({ query: 'BOB' }, 1, 10)).users.map((user) => user.email)).toEqual(['bob@corp.example']);
        expect((await directory.search({ query: '_' }, 1, 10)).total).toBe(1);
        expect((await directory.search({ query: '%' }, 1, 10)).total).toBe(0);
        const cat = (await accounts.findIdentity('corp', 's2'))!;
        await accounts.setStatus(cat.user_id, 'suspended');
        expect((await directory.search({ status: 'suspended' }, 1, 10)).users.map((user) => user.email)).toEqual(['cat@corp.example']);
        const sessions = new SessionStore(handle.db, cipher, timeouts, now);
        await sessions.create({ userId: cat.user_id, identityId: cat.id, providerId: 'corp' });
        await sessions.create({ userId: cat.user_id, identityId: cat.id, providerId: 'corp' });
        expect(await directory.get(cat.user_id)).toMatchObject({ email: 'cat@corp.example', status: 'suspended', activeSessions: 2, createdAt: T0, admin: false });
        expect(await directory.get('ghost')).toBeUndefined();
      });

      it('lists users in code-point order of email, then id', async () => {
        await expectUsersInCodePointOrder(handle.db, now);
      });

      it('searches case-insensitively in ASCII only, non-ASCII names and emails as they are written', async () => {
        await expectSearchAlikeEverywhere(handle.db, now);
      });

      it('counts admins from roles and config, and removes the role only while another admin is left', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const bob = await signUp('s2', 'bob@corp.example');
        await accounts.setRoles(ann.user.id, ['admin']);
        await accounts.setRoles(bob.user.id, ['ops', 'admin']);
        const directory = new UserDirectory(handle.db, admins(), noGroups, now);
        expect(await directory.adminCount()).toBe(2);
        expect(await directory.removeAdminRole(bob.user.id)).toEqual({ before: ['ops', 'admin'], after: ['ops'] });
        expect(await failure(directory.removeAdminRole(ann.user.id))).toBe('last_admin');
        expect(JSON.parse((await accounts.getUser(ann.user.id))!.roles)).toEqual(['admin']);
        // Not an admin: nothing to protect.
        expect(await directory.removeAdminRole(bob.user.id)).toEqual({ before: ['ops'], after: ['ops'] });
        expect(await directory.removeAdminRole('ghost')).toBeUndefined();
        // An admin from the config keeps someone an admin.
        const withConfig = new UserDirectory(handle.db, admins(['bob@corp.example']), noGroups, now);
        expect(await withConfig.adminCount()).toBe(2);
        expect(await withConfig.removeAdminRole(ann.user.id)).toEqual({ before: ['admin'], after: [] });
      });

      it('suspends a user only while another active admin is left', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const bob = await signUp('s2', 'bob@corp.example');
        await accounts.setRoles(ann.user.id, ['admin']);
        const directory = new UserDirectory(handle.db, admins(), noGroups, now);
        expect(await directory.suspend(bob.user.id)).toMatchObject({ id: bob.user.id, status: 'active', admin: false });
        expect((await directory.get(bob.user.id))?.status).toBe('suspended');
        expect(await failure(directory.suspend(ann.user.id))).toBe('last_admin');
        expect((await directory.get(ann.user.id))?.status).toBe('active');
        expect(await directory.suspend('ghost')).toBeUndefined();
      });
    });

    describe('sessions', () => {
      let sessions: SessionStore;
      let userId: string;
      let identityId: string;
      beforeEach(async () => {
        sessions = new SessionStore(handle.db, cipher, timeouts, now);
        const ann = await signUp('s1', 'ann@corp.example');
        userId = ann.user.id;
        identityId = ann.identity.id;
      });
      const create = (extra: Partial<Parameters<SessionStore['create']>[0]> = {}) => sessions.create({ userId, identityId, providerId: 'corp', ...extra });

      it('creates, finds by secret and id, touches at most once per interval, and expires', async () => {
        const { secret, session } = await create({ idToken: 'id-token', refreshToken: 'refresh', accessToken: { value: 'access', expiresAt: T0 + 10_000 }, ip: '10.0.0.1' });
        const found = (await sessions.findActive(secret))!;
        expect(found).toMatchObject({ id: session.id, created_at: T0, idle_expires_at: T0 + timeouts.idleTimeout, absolute_expires_at: T0 + timeouts.absoluteLifetime, ip: '10.0.0.1' });
        expect(typeof found.idle_expires_at).toBe('number');
        expect([sessions.idToken(found), sessions.refreshToken(found), sessions.accessToken(found)]).toEqual(['id-token', 'refresh', 'access']);
        expect(await sessions.findById(session.id)).toMatchObject({ secret_hash: hashSecret(secret) });
        expect(await sessions.findActive('not-a-secret')).toBeUndefined();
        clock += 30_000;
        expect(await sessions.touch(found)).toBe(found);
        clock += 60_000;
        const touched = await sessions.touch(found);
        expect((await sessions.findById(session.id))!.last_seen_at).toBe(touched.last_seen_at);
        expect(touched.idle_expires_at).toBe(clock + timeouts.idleTimeout);
        clock = touched.idle_expires_at;
        expect(await sessions.findActive(secret)).toBeUndefined();
      });

      it('reads a session with its user and identity in one statement, each exactly as read alone', async () => {
        const { session } = await create({ idToken: 'id-token', ip: '10.0.0.2' });
        const accounts = new AccountStore(handle.db, now);
        const found = (await sessions.findWithPerson({ id: session.id }))!;
        // Every column of each, with its type (numbers stay numbers on PostgreSQL too), and nothing more.
        expect(found.session).toStrictEqual(await sessions.findById(session.id));
        expect(found.user).toStrictEqual(await accounts.getUser(userId));
        expect(found.identity).toStrictEqual(await accounts.getIdentity(identityId));
        expect(await sessions.findWithPerson({ id: 'no-such-session' })).toBeUndefined();
      });

      it('finds a session with its person by its cookie, and by an app-host token only on the origin it was issued for', async () => {
        const { secret, session } = await create();
        expect((await sessions.findWithPerson({ secretHash: hashSecret(secret) }))?.session.id).toBe(session.id);
        expect(await sessions.findWithPerson({ secretHash: hashSecret('x'.repeat(43)) })).toBeUndefined();
        const token = await new AppSessions(handle.db, now).create(session.id, 'wiki', 'http://wiki.localhost:4180');
        const onItsOrigin = await sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin: 'http://wiki.localhost:4180' });
        expect(onItsOrigin?.session.id).toBe(session.id);
        expect(onItsOrigin?.user.id).toBe(userId);
        // Threat: a token issued for one app's origin presented on another app's host (or a look-alike spelling of it).
        for (const appOrigin of ['http://grafana.localhost:4180', 'http://WIKI.localhost:4180', 'http://wiki.localhost:4180/', 'http://wiki.localhost']) {
          expect(await sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin }), appOrigin).toBeUndefined();
        }
      });

      it('writes activity in batches: answered at once, stored at the flush, never past the absolute expiry, never on a revoked session', async () => {
        const batched = new SessionStore(handle.db, cipher, timeouts, now, 1_000);
        const made = await Promise.all(Array.from({ length: 5 }, () => create()));
        const stored = async (id: string) => (await sessions.findById(id))!;
        clock += timeouts.touchInterval;
        const touched = await batched.touch(made[0]!.session);
        expect(touched.last_seen_at).toBe(clock);
        // Nothing written yet: the batch waits for its interval.
        expect((await stored(made[0]!.session.id)).last_seen_at).toBe(T0);
        clock += 200;
        await batched.touch(made[1]!.session);
        await batched.touch(made[2]!.session);
        await sessions.revoke(made[2]!.session.id, 'sign-out');
        await batched.flushActivity();
        // One time for the batch, its latest.
        expect((await stored(made[0]!.session.id)).last_seen_at).toBe(clock);
        expect((await stored(made[1]!.session.id))).toMatchObject({ last_seen_at: clock, idle_expires_at: clock + timeouts.idleTimeout });
        expect((await stored(made[2]!.session.id)).last_seen_at).toBe(T0);
        expect((await stored(made[3]!.session.id)).last_seen_at).toBe(T0);
        // Near the absolute expiry, the idle one stops there.
        clock = made[4]!.session.absolute_expires_at - 1000;
        await batched.touch(made[4]!.session);
        await batched.stopActivity();
        expect(await stored(made[4]!.session.id)).toMatchObject({ last_seen_at: clock, idle_expires_at: made[4]!.session.absolute_expires_at });
      });

      it('writes a batch of any size (more than one statement holds, and not a power of two)', async () => {
        const batched = new SessionStore(handle.db, cipher, timeouts, now, 1_000);
        const made = await Promise.all(Array.from({ length: 600 }, () => create()));
        clock += timeouts.touchInterval;
        for (const { session } of made.slice(0, 555)) await batched.touch(session);
        await batched.flushActivity();
        const seen = await handle.db.selectFrom('sessions').select(['last_seen_at']).where('id', 'in', made.map((m) => m.session.id)).execute();
        expect(seen.filter((row) => row.last_seen_at === clock)).toHaveLength(555);
        expect(seen.filter((row) => row.last_seen_at === T0)).toHaveLength(45);
      });

      it('counts and lists live sessions; revokes by id, user, identity, provider and IdP session', async () => {
        const a = await create({ idpSid: 'sid-a' });
        clock += 1;
        const b = await create();
        clock += 1;
        const c = await create({ idpSid: 'sid-c' });
        expect(await sessions.countLive()).toBe(3);
        expect((await sessions.listActiveForUser(userId)).map((session) => session.id)).toEqual([c.session.id, b.session.id, a.session.id]);
        const revokedBatches: string[][] = [];
        sessions.onRevoke((batch) => revokedBatches.push(batch.map((session) => session.id)));
        expect(await sessions.revoke(a.session.id, 'sign-out')).toBe(true);
        expect(await sessions.revoke(a.session.id, 'sign-out')).toBe(false);
        const revoked = (await sessions.findById(a.session.id))!;
        expect(revoked).toMatchObject({ revoked_at: clock, revoked_reason: 'sign-out', refresh_token_enc: null });
        expect(await sessions.revokeForUser('someone-else', b.session.id, 'revoked-by-user')).toBe(false);
        expect((await sessions.revokeByIdpSession('corp', { sid: 'sid-c' })).map((session) => session.id)).toEqual([c.session.id]);
        expect(await sessions.revokeByIdpSession('corp', {})).toEqual([]);
        const d = await create();
        expect((await sessions.revokeByIdpSession('other', { sub: 's1' })).length).toBe(0);
        expect((await sessions.revokeAllForUser(userId, 'sign-out-everywhere', d.session.id)).map((session) => session.id)).toEqual([b.session.id]);
        expect((await sessions.revokeForIdentity(identityId, 'identity-unlinked')).map((session) => session.id)).toEqual([d.session.id]);
        const e = await create();
        expect((await sessions.revokeByIdpSession('corp', { sub: 's1' })).map((session) => session.id)).toEqual([e.session.id]);
        const f = await create();
        expect((await sessions.revokeForProvider('corp', 'provider-disabled')).map((session) => session.id)).toEqual([f.session.id]);
        expect(await sessions.countLive()).toBe(0);
        expect(revokedBatches).toHaveLength(6);
      });

      it('claims a claims check once and stores refreshed tokens (not on a revoked session)', async () => {
        const { session } = await create({ refreshToken: 'r1' });
        expect(await sessions.beginClaimsCheck(session, T0 + 100)).toBe(true);
        expect(await sessions.beginClaimsCheck(session, T0 + 200)).toBe(false);
        await sessions.storeRefreshedTokens(session, { refreshToken: 'r2', idToken: 'i2', accessToken: { value: 'a2', expiresAt: undefined }, checkedAt: T0 + 300 });
        const stored = (await sessions.findById(session.id))!;
        expect(stored.claims_checked_at).toBe(T0 + 300);
        expect([sessions.refreshToken(stored), sessions.idToken(stored), sessions.accessToken(stored)]).toEqual(['r2', 'i2', 'a2']);
        await sessions.revoke(session.id, 'refresh-failed');
        await sessions.storeRefreshedTokens(stored, { refreshToken: 'r3', checkedAt: T0 + 400 });
        expect((await sessions.findById(session.id))!.refresh_token_enc).toBeNull();
        expect(await sessions.beginClaimsCheck(stored, T0 + 500)).toBe(false);
      });

      it('app-host codes are taken once; app sessions resolve only for their origin', async () => {
        const { session } = await create();
        const appSessions = new AppSessions(handle.db, now);
        const app = { id: 'wiki', publicUrl: 'http://wiki.localhost:4180' } as Parameters<AppSessions['issueCode']>[0]['app'];
        const code = await appSessions.issueCode({ sessionId: session.id, app, state: 'st', returnTo: '/' });
        expect(await appSessions.redeemCode(code, 'wrong', 'http://wiki.localhost:4180')).toBeUndefined();
        const again = await appSessions.issueCode({ sessionId: session.id, app, state: 'st', returnTo: '/x' });
        expect(await appSessions.redeemCode(again, 'st', 'http://wiki.localhost:4180')).toMatchObject({ return_to: '/x', app_id: 'wiki' });
        expect(await appSessions.redeemCode(again, 'st', 'http://wiki.localhost:4180')).toBeUndefined();
        const token = await appSessions.create(session.id, 'wiki', 'http://wiki.localhost:4180');
        expect((await sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin: 'http://wiki.localhost:4180' }))?.session.id).toBe(session.id);
        expect(await sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin: 'http://evil.localhost:4180' })).toBeUndefined();
        await appSessions.issueCode({ sessionId: session.id, app, state: 's', returnTo: '/' });
        clock += 61_000;
        expect(await appSessions.purgeExpiredCodes()).toBe(1);
      });
    });

    describe('sign-in attempts', () => {
      it('are consumed once, by the browser that started them, before they expire; expired ones are purged', async () => {
        const attempts = new SignInAttempts(handle.db, 600_000, now);
        const attempt = { state: 'state-1', bindingSecret: 'bind-1', providerId: 'corp', nonce: 'n', codeVerifier: 'v', returnTo: '/', purpose: 'sign-in' as const };
        await attempts.create(attempt);
        expect(await attempts.consume('state-1', 'bind-1')).toMatchObject({ provider_id: 'corp', expires_at: T0 + 600_000, user_id: null });
        expect(await attempts.consume('state-1', 'bind-1')).toBeUndefined();
        await attempts.create({ ...attempt, state: 'state-2' });
        expect(await attempts.consume('state-2', 'other-browser')).toBeUndefined();
        expect(await attempts.consume('state-2', 'bind-1')).toBeUndefined();
        await attempts.create({ ...attempt, state: 'state-3', purpose: 'link', userId: 'u', sessionId: 's' });
        await attempts.create({ ...attempt, state: 'state-4' });
        clock += 600_000;
        expect(await attempts.consume('state-3', 'bind-1')).toBeUndefined();
        expect(await attempts.purgeExpired()).toBe(1);
      });
    });

    describe('console apps, providers and settings', () => {
      it('app store: create, load, update, remove', async () => {
        const registry = new AppRegistry([]);
        const store = new AppStore(handle.db, registry, 'http://localhost:4180', now, log);
        const wiki = { id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ domains: ['example.com'] }] } };
        await store.create(wiki);
        expect(registry.get('wiki')?.name).toBe('Wiki');
        await store.update('wiki', { ...wiki, name: 'Team wiki' });
        const fresh = new AppRegistry([]);
        expect((await new AppStore(handle.db, fresh, 'http://localhost:4180', now, log).load()).map((app) => app.name)).toEqual(['Team wiki']);
        await store.remove('wiki');
        expect(registry.get('wiki')).toBeUndefined();
      });

      // Threat: every provider's access token handed to an app. A definition saved when `true` meant that
      // reads as no provider's (fail closed), and the app stays up and editable; the log says what to do.
      it('app store: a definition saved with passAccessToken: true loads with no provider’s token, and a warning', async () => {
        const wiki = { id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] }, passAccessToken: true, compress: false };
        await handle.db.insertInto('apps').values({ id: 'wiki', definition: JSON.stringify(wiki), created_at: now(), updated_at: now() }).execute();
        const warnings: string[] = [];
        const registry = new AppRegistry([]);
        await new AppStore(handle.db, registry, 'http://localhost:4180', now, { warn: (_fields: unknown, message?: string) => void warnings.push(message ?? '') } as Pick<FastifyBaseLogger, 'warn'>).load();
        expect(registry.get('wiki')?.passAccessToken).toEqual([]);
        expect(registry.passesAccessTokens).toBe(false);
        expect(warnings).toEqual([expect.stringContaining('passAccessToken: true (every provider')]);
      });

      it('provider store: create (issuer checked by the injected discovery), update, disable, remove, credentials sealed', async () => {
        const registry = new ProviderRegistry([], log, () => new Promise(() => undefined));
        const checked: string[] = [];
        const store = new ProviderStore({ db: handle.db, registry, cipher, accounts, log }, async (issuer) => {
          checked.push(issuer);
          return { pkce: 'S256' } as DiscoveryPreview;
        }, now);
        try {
          await store.create({ id: 'okta', name: 'Okta', issuer: 'https://okta.example', clientId: 'g', clientSecret: 'top-secret' });
          expect(checked).toEqual(['https://okta.example']);
          const row = (await handle.db.selectFrom('providers').selectAll().executeTakeFirstOrThrow());
          expect(row.definition).not.toContain('top-secret');
          expect(row.created_at).toBe(T0);
          await store.update('okta', { id: 'okta', name: 'Okta 2', issuer: 'https://okta.example', clientId: 'g' });
          await store.setEnabled('okta', false);
          const reloaded = new ProviderRegistry([], log, () => new Promise(() => undefined));
          const loaded = await new ProviderStore({ db: handle.db, registry: reloaded, cipher, accounts, log }, undefined, now).load();
          expect(loaded.map(({ name, enabled, clientSecret }) => ({ name, enabled, clientSecret }))).toEqual([{ name: 'Okta 2', enabled: false, clientSecret: 'top-secret' }]);
          reloaded.close();
          await store.remove('okta');
          expect(await handle.db.selectFrom('providers').selectAll().execute()).toEqual([]);
        } finally {
          registry.close();
        }
      });

      it('sign-in settings: open until set, then stored and replaced', async () => {
        const settings = new SignInSettingsStore(handle.db, now);
        expect(await settings.get()).toEqual({ ...OPEN_ORGANIZATION, allowedDomains: [] });
        expect(await settings.update({ allowedDomains: ['corp.example'], createUsers: false })).toMatchObject({ after: { allowedDomains: ['corp.example'], createUsers: false } });
        await settings.update({ allowedDomains: [] });
        expect(await settings.get()).toEqual({ allowedDomains: [], createUsers: true });
      });
    });

    describe('audit log', () => {
      // Threat: a NUL character in a request's free text (a user agent) failing the write on PostgreSQL,
      // whose text refuses it (SQLite would keep it): the session or the audit event must still be written.
      it('keeps a user agent without its NUL characters, in sessions and audit events alike', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const { session } = await new SessionStore(handle.db, cipher, timeouts, now).create({ userId: ann.user.id, identityId: ann.identity.id, providerId: 'corp', userAgent: 'Mozilla/5.0\u0000 (X11)' });
        expect(session.user_agent).toBe('Mozilla/5.0 (X11)');
        const audit = new AuditLog(handle.db, now);
        const id = await audit.record({ type: 'sign_in', targetUserId: ann.user.id, request: { ip: '10.0.0.1', headers: { 'user-agent': '\u0000curl\u0000' } }, details: { note: 'a\u0000b' } });
        expect(await audit.get(id)).toMatchObject({ userAgent: 'curl', details: { note: 'a\u0000b' } });
      });

      it('records, queries with filters and paging, streams, buckets, ranks denials, lists a user', async () => {
        const audit = new AuditLog(handle.db, now);
        const id = await audit.record({ type: 'sign_in', actorUserId: 'u1', targetUserId: 'u1', request: { ip: '10.0.0.1', headers: { 'user-agent': 'UA' } }, details: { via: 'corp' } });
        for (let index = 0; index < 5; index++) {
          clock += 60_000;
          await audit.record({ type: 'access_denied', outcome: 'failure', targetUserId: 'u2', appId: index < 3 ? 'wiki' : 'vault' });
        }
        clock += 60_000;
        await audit.record({ type: 'admin_granted', actorUserId: 'u2', targetUserId: 'u1' });
        expect(await audit.get(id)).toMatchObject({ time: T0, type: 'sign_in', outcome: 'success', ip: '10.0.0.1', userAgent: 'UA', details: { via: 'corp' } });
        const page = await audit.query({ type: 'access_denied' }, 2, 2);
        expect(page.total).toBe(5);
        expect(page.events.map((event) => event.time)).toEqual([T0 + 180_000, T0 + 120_000]);
        expect((await audit.query({ userId: 'u2' }, 1, 50)).total).toBe(6);
        expect((await audit.query({ outcome: 'failure', appId: 'vault' }, 1, 50)).total).toBe(2);
        expect((await audit.query({ from: T0 + 60_000, to: T0 + 120_000 }, 1, 50)).total).toBe(1);
        const batches: number[] = [];
        for await (const batch of audit.stream({}, 4)) batches.push(batch.length);
        expect(batches).toEqual([4, 3]);
        const buckets = await audit.countsByBucket(['access_denied', 'sign_in'], T0, 120_000);
        const base = Math.floor(T0 / 120_000);
        expect(buckets.sort((a, b) => a.bucket - b.bucket || a.type.localeCompare(b.type))).toEqual([
          { bucket: base, type: 'access_denied', n: 1 },
          { bucket: base, type: 'sign_in', n: 1 },
          { bucket: base + 1, type: 'access_denied', n: 2 },
          { bucket: base + 2, type: 'access_denied', n: 2 },
        ]);
        expect(await audit.topDeniedApps(T0, 5)).toEqual([{ appId: 'wiki', denials: 3 }, { appId: 'vault', denials: 2 }]);
        expect((await audit.forUser('u1')).map((event) => event.type)).toEqual(['admin_granted', 'sign_in']);
      });
    });

    // Lists whose sort key can tie (rows made in one millisecond) take the id as a tie-breaker, in
    // code-point order: one order on both databases and every server, so a page never repeats or skips
    // a row, and the dashboard's top list is cut at the same place every time.
    describe('equal sort keys', () => {
      // In an order neither the ids' nor any collation's: insertion order is not what is checked.
      const IDS = ['m-2', 'b_1', 'z', 'a.1', 'a-1', 'B', 'a1'];

      it('audit events of one moment: every page of the log, and the export, show each exactly once', async () => {
        const audit = new AuditLog(handle.db, now);
        for (let index = 0; index < 11; index++) await audit.record({ type: 'sign_in', targetUserId: 'u1' });
        const whole = (await audit.query({}, 1, 50)).events.map((event) => event.id);
        expect(whole).toEqual([...whole].sort(byCodePoint));
        for (const size of [2, 3, 4]) {
          const paged: string[] = [];
          for (let page = 1; page <= Math.ceil(11 / size); page++) paged.push(...(await audit.query({}, page, size)).events.map((event) => event.id));
          expect(paged).toEqual(whole);
          const ofUser: string[] = [];
          for (let page = 1; page <= Math.ceil(11 / size); page++) ofUser.push(...(await audit.pageForUser('u1', page, size)).events.map((event) => event.id));
          expect(ofUser).toEqual(whole);
        }
        const streamed: string[] = [];
        for await (const batch of audit.stream({}, 3)) streamed.push(...batch.map((event) => event.id));
        expect(streamed).toEqual(whole);
      });

      it('dashboard: apps with as many denials are ranked by id, so the top list is cut at the same place', async () => {
        const audit = new AuditLog(handle.db, now);
        for (const appId of IDS) for (let count = 0; count < 2; count++) await audit.record({ type: 'access_denied', outcome: 'failure', appId });
        await audit.record({ type: 'access_denied', outcome: 'failure', appId: 'z' });
        const sorted = IDS.filter((id) => id !== 'z').sort(byCodePoint);
        expect(await audit.topDeniedApps(T0, 3)).toEqual([{ appId: 'z', denials: 3 }, ...sorted.slice(0, 2).map((appId) => ({ appId, denials: 2 }))]);
        expect((await audit.topDeniedApps(T0, 50)).map((row) => row.appId)).toEqual(['z', ...sorted]);
      });

      it("sessions used at one moment, and identities linked at one moment, are listed by id", async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const sessions = new SessionStore(handle.db, cipher, timeouts, now);
        for (let index = 0; index < 6; index++) await sessions.create({ userId: ann.user.id, identityId: ann.identity.id, providerId: 'corp' });
        const listed = (await sessions.listActiveForUser(ann.user.id)).map((session) => session.id);
        expect(listed).toHaveLength(6);
        expect(listed).toEqual([...listed].sort(byCodePoint));
        // The one used last comes first whatever its id.
        clock += 60_000;
        const last = listed[3]!;
        await handle.db.updateTable('sessions').set({ last_seen_at: clock }).where('id', '=', last).execute();
        expect((await sessions.listActiveForUser(ann.user.id)).map((session) => session.id)).toEqual([last, ...listed.filter((id) => id !== last)]);

        const identities = IDS.map((id) => ({ id: `i-${id}`, user_id: ann.user.id, provider_id: `p-${id}`, subject: id, email: null, email_verified: 0, claims: '{}', linked_at: T0 + 5, last_used_at: null }));
        await handle.db.insertInto('identities').values(identities).execute();
        expect((await accounts.listIdentities(ann.user.id)).map((identity) => identity.id)).toEqual([ann.identity.id, ...identities.map((identity) => identity.id).sort(byCodePoint)]);
      });

      it('console apps and providers created at one moment are loaded (and listed) by id', async () => {
        const registry = new AppRegistry([]);
        const apps = new AppStore(handle.db, registry, 'http://localhost:4180', now, log);
        for (const id of IDS.map((id) => id.toLowerCase().replace(/[^a-z0-9]+/g, '-')).filter((id, index, all) => all.indexOf(id) === index && /^[a-z0-9]/.test(id))) {
          await apps.create({ id, name: id, publicUrl: `http://${id}.localhost:4180`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
        }
        const appIds = registry.all().map((app) => app.id);
        expect(appIds.length).toBeGreaterThan(3);
        expect(appIds).toEqual([...appIds].sort(byCodePoint));
        expect((await new AppStore(handle.db, new AppRegistry([]), 'http://localhost:4180', now, log).load()).map((app) => app.id)).toEqual(appIds);

        const providers = new ProviderRegistry([], log, () => new Promise(() => undefined));
        const store = new ProviderStore({ db: handle.db, registry: providers, cipher, accounts, log }, async () => ({ pkce: 'S256' }) as DiscoveryPreview, now);
        try {
          for (const id of ['okta', 'corp-b', 'corp', 'azure', 'corp-a']) await store.create({ id, name: id, issuer: 'https://idp.example', clientId: 'g', clientSecret: 's' });
          expect(providers.all().map((provider) => provider.id)).toEqual(['azure', 'corp', 'corp-a', 'corp-b', 'okta']);
        } finally {
          providers.close();
        }
      });
    });

    describe('signing keys and logout tokens', () => {
      it('signing keys: the first is created once, rotation keeps the old one published', async () => {
        const keys = new SigningKeys(handle.db, cipher, now);
        await keys.load();
        const first = keys.current().kid;
        await new SigningKeys(handle.db, cipher, now).load();
        expect(await handle.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(1);
        clock += 1000;
        const second = await keys.rotate();
        expect(second).not.toBe(first);
        expect(keys.publicJwks().keys.map((key) => key.kid)).toEqual([second, first]);
      });

      it("logout-token jti: remembered once per provider, purged after expiry", async () => {
        const tokens = new LogoutTokenStore(handle.db);
        expect(await tokens.remember('corp', 'j1', T0 + 1000)).toBe(true);
        expect(await tokens.remember('corp', 'j1', T0 + 1000)).toBe(false);
        expect(await tokens.remember('other', 'j1', T0 + 1000)).toBe(true);
        expect(await purgeLogoutTokenJtis(handle.db, T0 + 1000)).toBe(2);
        expect(await tokens.remember('corp', 'j1', T0 + 5000)).toBe(true);
      });
    });

    describe(`races${realConcurrency ? '' : ' (one connection: requests of one node)'}`, () => {
      /** Two stores on their own connections (PostgreSQL: two pools, as two nodes would have). */
      let second: DatabaseHandle;
      beforeEach(async () => {
        second = realConcurrency ? await open.sibling!(handle) : handle;
      });
      afterEach(async () => {
        if (second !== handle) await second.close();
      });

      it('a sign-in attempt redeemed twice at once is taken exactly once', async () => {
        const attempts = [new SignInAttempts(handle.db, 600_000, now), new SignInAttempts(second.db, 600_000, now)];
        for (let round = 0; round < 5; round++) {
          await attempts[0]!.create({ state: `st-${round}`, bindingSecret: 'b', providerId: 'corp', nonce: 'n', codeVerifier: 'v', returnTo: '/', purpose: 'sign-in' });
          const taken = await Promise.all(attempts.flatMap((store) => [store.consume(`st-${round}`, 'b'), store.consume(`st-${round}`, 'b')]));
          expect(taken.filter(Boolean)).toHaveLength(1);
        }
      });

      it('two claim refreshes of one session: exactly one flight', async () => {
        const ann = await signUp('s1', 'ann@corp.example');
        const stores = [new SessionStore(handle.db, cipher, timeouts, now), new SessionStore(second.db, cipher, timeouts, now)];
        const { session } = await stores[0]!.create({ userId: ann.user.id, identityId: ann.identity.id, providerId: 'corp' });
        for (let round = 1; round <= 5; round++) {
          const current = (await stores[0]!.findById(session.id))!;
          const won = await Promise.all(stores.flatMap((store) => [store.beginClaimsCheck(current, T0 + round), store.beginClaimsCheck(current, T0 + round)]));
          expect(won.filter(Boolean)).toHaveLength(1);
        }
      });

      it('two first sign-ins with one email at once: one user; the other is refused or linked by the rules', async () => {
        const stores = [accounts, new AccountStore(second.db, now)];
        for (let round = 0; round < 4; round++) {
          const email = `twin${round}@corp.example`;
          // Another identity, an untrusted provider: refused (identity_conflict), never a second user.
          const outcomes = await Promise.allSettled([stores[0]!.signIn(provider, profile(`a${round}`, email), OPEN_ORGANIZATION), stores[1]!.signIn(provider, profile(`b${round}`, email), OPEN_ORGANIZATION)]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          const refused = outcomes.find((outcome) => outcome.status === 'rejected');
          expect((refused?.reason as AppError).code).toBe('identity_conflict');
          // A provider trusted to link by email: both succeed, as one user.
          const linked = await Promise.all([stores[0]!.signIn(trusting, profile(`p${round}`, `x${email}`), OPEN_ORGANIZATION), stores[1]!.signIn({ ...trusting, id: 'partner2' }, profile(`q${round}`, `x${email}`), OPEN_ORGANIZATION)]);
          expect(linked[0].user.id).toBe(linked[1].user.id);
          // The very same identity twice: one user, one identity, no unique-constraint failure.
          const same = await Promise.all([stores[0]!.signIn(provider, profile(`same${round}`, `y${email}`), OPEN_ORGANIZATION), stores[1]!.signIn(provider, profile(`same${round}`, `y${email}`), OPEN_ORGANIZATION)]);
          expect(same[0].identity.id).toBe(same[1].identity.id);
        }
        const rows = await handle.db.selectFrom('users').select('email').execute();
        expect(rows.length).toBe(new Set(rows.map((row) => row.email)).size);
      });

      it('two unlinks of the last two identities at once: one identity stays', async () => {
        for (let round = 0; round < 3; round++) {
          const ann = await signUp(`u${round}`, `ann${round}@corp.example`);
          const other = await accounts.link(ann.user.id, trusting, profile(`o${round}`, `ann${round}@corp.example`), OPEN_ORGANIZATION);
          const outcomes = await Promise.allSettled([accounts.unlink(ann.user.id, ann.identity.id), new AccountStore(second.db, now).unlink(ann.user.id, other.identity.id)]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect(await accounts.listIdentities(ann.user.id)).toHaveLength(1);
        }
      });

      it('two admins removing the last two admins at once: one stays', async () => {
        for (let round = 0; round < 4; round++) {
          const ann = await signUp(`a${round}`, `ann${round}@corp.example`);
          const bob = await signUp(`b${round}`, `bob${round}@corp.example`);
          await accounts.setRoles(ann.user.id, ['admin']);
          await accounts.setRoles(bob.user.id, ['admin']);
          const directories = [new UserDirectory(handle.db, admins(), noGroups, now), new UserDirectory(second.db, admins(), noGroups, now)];
          const outcomes = await Promise.allSettled([directories[0]!.removeAdminRole(ann.user.id), directories[1]!.removeAdminRole(bob.user.id)]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect(((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError).code).toBe('last_admin');
          expect(await directories[0]!.adminCount()).toBe(1);
          // Leave no admin behind for the next round.
          await accounts.setRoles(ann.user.id, []);
          await accounts.setRoles(bob.user.id, []);
        }
      });

      // Threat: two creates of one id at once (two admins, two nodes) both passing the registry check;
      // the loser must get the duplicate-id refusal a later create gets, never a 500 from the database.
      it('two console apps created with one id at once: one is created, the other refused as a duplicate', async () => {
        const wiki = { id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ domains: ['example.com'] }] } };
        const nodes = [handle, second].map((db) => new AppStore(db.db, new AppRegistry([]), 'http://localhost:4180', now, log));
        for (let round = 0; round < 3; round++) {
          const app = { ...wiki, id: `wiki${round}`, publicUrl: `http://wiki${round}.localhost:4180` };
          const outcomes = await Promise.allSettled(nodes.map((store) => store.create(app)));
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          const refused = (outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError;
          // The answer a sequential duplicate gets, from the node that already knows the app.
          const later = await nodes[outcomes[0]!.status === 'fulfilled' ? 0 : 1]!.create(app).then(
            () => expect.fail('a duplicate app was created'),
            (error: unknown) => error as AppError,
          );
          for (const answer of [refused, later]) {
            expect(answer).toMatchObject({ code: 'conflict', status: 409, field: 'id', message: `Another app already has the id "wiki${round}". Choose another.` });
          }
        }
        expect(await handle.db.selectFrom('apps').select('id').execute()).toHaveLength(3);
      });

      // Threat: two apps created for one host at once (two admins, two nodes) both passing the registry's
      // check: two apps claiming one host, one of them never served. The database keeps one per host.
      it('two console apps created with one host at once: one is created, the other refused naming the host', async () => {
        const nodes = [handle, second].map((db) => new AppStore(db.db, new AppRegistry([]), 'http://localhost:4180', now, log));
        for (let round = 0; round < 3; round++) {
          const app = (id: string) => ({ id, name: id, publicUrl: `http://Host${round}.localhost:4180`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
          const outcomes = await Promise.allSettled([nodes[0]!.create(app(`a${round}`)), nodes[1]!.create(app(`b${round}`))]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          const winner = outcomes[0]!.status === 'fulfilled' ? `a${round}` : `b${round}`;
          const refused = (outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError;
          // The host as the proxy looks it up (lower-case), and the app that has it.
          expect(refused).toMatchObject({ code: 'conflict', status: 409, field: 'publicUrl', message: `Another app ("${winner}") already uses host${round}.localhost:4180. Choose another.` });
        }
        expect((await handle.db.selectFrom('apps').select(['id', 'host']).execute()).map((row) => row.host).sort()).toEqual(['host0.localhost:4180', 'host1.localhost:4180', 'host2.localhost:4180']);
      });

      it('an app moved to a host another node has just given an app: refused naming the host, and unchanged', async () => {
        const nodes = [handle, second].map((db) => new AppStore(db.db, new AppRegistry([]), 'http://localhost:4180', now, log));
        const app = (id: string, host: string) => ({ id, name: id, publicUrl: `http://${host}.localhost:4180`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
        await nodes[1]!.create(app('docs', 'docs'));
        // Created on the first node after the second loaded its apps: only the database sees the clash.
        await nodes[0]!.create(app('wiki', 'wiki'));
        const moved = await nodes[1]!.update('docs', app('docs', 'wiki')).catch((error: unknown) => error as AppError);
        expect(moved).toMatchObject({ code: 'conflict', field: 'publicUrl', message: 'Another app ("wiki") already uses wiki.localhost:4180. Choose another.' });
        expect(await handle.db.selectFrom('apps').select(['id', 'host']).orderBy('id').execute()).toEqual([
          { id: 'docs', host: 'docs.localhost:4180' },
          { id: 'wiki', host: 'wiki.localhost:4180' },
        ]);
      });

      it('two console providers created with one id at once: one is created, the other refused as a duplicate', async () => {
        const registries = [0, 1].map(() => new ProviderRegistry([], log, () => new Promise(() => undefined)));
        const nodes = [handle, second].map(
          (db, index) => new ProviderStore({ db: db.db, registry: registries[index]!, cipher, accounts: new AccountStore(db.db, now), log }, async () => ({ pkce: 'S256' }) as DiscoveryPreview, now),
        );
        try {
          for (let round = 0; round < 3; round++) {
            const okta = { id: `okta${round}`, name: 'Okta', issuer: 'https://okta.example', clientId: 'g', clientSecret: 's' };
            const outcomes = await Promise.allSettled(nodes.map((store) => store.create(okta)));
            expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
            const refused = (outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError;
            const later = await nodes[outcomes[0]!.status === 'fulfilled' ? 0 : 1]!.create(okta).then(
              () => expect.fail('a duplicate provider was created'),
              (error: unknown) => error as AppError,
            );
            expect([refused.code, refused.message]).toEqual(['conflict', later.message]);
            expect(refused).toMatchObject({ status: 409, field: 'id', message: `Another provider already has the id "okta${round}". Choose another.` });
          }
          expect(await handle.db.selectFrom('providers').select('id').execute()).toHaveLength(3);
        } finally {
          registries.forEach((registry) => registry.close());
        }
      });

      // Threat: an admin suspending the other admin while that one removes their own admin role: each
      // check saw the other still an active admin, and together they left none.
      it('suspending one of the last two admins while the other drops the role: an active admin stays', async () => {
        for (let round = 0; round < 4; round++) {
          const ann = await signUp(`sa${round}`, `sann${round}@corp.example`);
          const bob = await signUp(`sb${round}`, `sbob${round}@corp.example`);
          await accounts.setRoles(ann.user.id, ['admin']);
          await accounts.setRoles(bob.user.id, ['admin']);
          const directories = [new UserDirectory(handle.db, admins(), noGroups, now), new UserDirectory(second.db, admins(), noGroups, now)];
          const outcomes = await Promise.allSettled([directories[0]!.suspend(bob.user.id), directories[1]!.removeAdminRole(ann.user.id)]);
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
          expect(((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as AppError).code).toBe('last_admin');
          expect(await directories[0]!.adminCount()).toBe(1);
          await accounts.setRoles(ann.user.id, []);
          await accounts.setRoles(bob.user.id, []);
        }
      });

      it('nodes starting together on a new database make one signing key and all use it', async () => {
        const nodes = [new SigningKeys(handle.db, cipher, now), new SigningKeys(second.db, cipher, now), new SigningKeys(second.db, cipher, now)];
        await Promise.all(nodes.map((keys) => keys.load()));
        expect(await handle.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(1);
        expect(new Set(nodes.map((keys) => keys.current().kid)).size).toBe(1);
      });

      it('a logout token delivered twice at once is acted on once', async () => {
        const stores = [new LogoutTokenStore(handle.db), new LogoutTokenStore(second.db)];
        for (let round = 0; round < 5; round++) {
          const accepted = await Promise.all(stores.flatMap((store) => [store.remember('corp', `jti-${round}`, T0 + 1000), store.remember('corp', `jti-${round}`, T0 + 1000)]));
          expect(accepted.filter(Boolean)).toHaveLength(1);
        }
      });
    });
  });
}

/** `open`, and for real concurrency a second handle on the same database (another node). */
export type Opener = (() => Promise<DatabaseHandle>) & { sibling?: (handle: DatabaseHandle) => Promise<DatabaseHandle> };
