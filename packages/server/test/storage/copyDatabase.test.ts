import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DiscoveryPreview } from '@gatehouse/contract';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityProfile } from '../../src/accounts/identityProfile.js';
import { OPEN_ORGANIZATION } from '../../src/accounts/admission.js';
import { opAdapterFactory } from '../../src/provide/adapter.js';
import { OpStore } from '../../src/provide/opStore.js';
import { ProviderStore } from '../../src/providers/providerStore.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createServices, type Services } from '../../src/services.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { COPY_ORDER, copyDatabase, CopyRefusedError, parseDatabaseLocation, type DatabaseLocation } from '../../src/storage/copyDatabase.js';
import { openDatabase } from '../../src/storage/database.js';
import { executedMigrations, KNOWN_MIGRATIONS } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/schema.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * `gatehouse copy-database`: an install moved from SQLite to PostgreSQL (and back) keeps everything —
 * people stay signed in, tokens still decrypt, every row is the same — and a copy that cannot be
 * complete leaves nothing behind.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const log = pino({ level: 'silent' });
const request = { log, ip: '192.0.2.7', headers: { 'user-agent': 'copy-test' } };
const WIKI_ORIGIN = 'https://wiki.example.com';
/** An access token of the OpenID Provider (its id is the bearer value, stored only hashed, its payload sealed under it). */
const OP_ACCESS_TOKEN = 'op-access-token-of-ann-0123456789';

let server: TestPostgres;
let dir: string;
beforeAll(async () => {
  server = await startPostgres();
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-copy-'));
}, 60_000);
afterAll(() => {
  server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One install's secrets: the nodes on the new database use the same ones. */
const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] };

function configFor(database: { url: string } | { path: string }): Config {
  return parseConfig(
    {
      mode: 'production',
      publicUrl: 'https://gatehouse.example.com',
      dataDir: dir,
      secrets,
      database,
      providers: [{ id: 'corp', name: 'Corp', issuer: 'https://idp.corp.example', clientId: 'gatehouse', clientSecret: 'corp-secret', createUsers: true }],
    },
    { env: {} },
  );
}

const sqliteAt = (name: string): DatabaseLocation => ({ kind: 'sqlite', file: path.join(dir, name) });
const newPostgres = async (): Promise<DatabaseLocation> => ({ kind: 'postgres', url: await server.createDatabase() });
const configAt = (location: DatabaseLocation) => configFor(location.kind === 'sqlite' ? { path: location.file } : { url: location.url });

function profile(subject: string, email: string, extra: Partial<IdentityProfile> = {}): IdentityProfile {
  return { subject, email, emailVerified: true, name: email.split('@')[0], picture: undefined, groups: ['staff'], sid: 'idp-sid-1', extra: {}, ...extra };
}

interface Install {
  userId: string;
  sessionSecret: string;
  sessionId: string;
  appToken: string;
  currentKid: string;
}

/**
 * An install with a row in every table, written by the real stores as Gatehouse writes them. `extra`
 * adds to it before it closes.
 */
async function populate(location: DatabaseLocation, extra?: (services: Services) => Promise<void>): Promise<Install> {
  const services = await createServices(configAt(location), log);
  try {
    const corp = services.providers.get('corp')!;
    const { user, identity } = await services.accounts.signIn(corp, profile('ann-sub', 'ann@example.com'), OPEN_ORGANIZATION);
    await services.accounts.link(user.id, { ...corp, id: 'partner' }, profile('ann-partner', 'ann@partner.example'), OPEN_ORGANIZATION);
    const { secret, session } = await services.sessions.create({
      userId: user.id,
      identityId: identity.id,
      providerId: 'corp',
      idpSid: 'idp-sid-1',
      idToken: 'id-token-of-ann',
      refreshToken: 'refresh-token-of-ann',
      accessToken: { value: 'access-token-of-ann', expiresAt: Date.now() + 3_600_000 },
      ip: '192.0.2.7',
      userAgent: 'Firefox',
    });
    const ended = await services.sessions.create({ userId: user.id, identityId: identity.id, providerId: 'corp' });
    await services.sessions.revoke(ended.session.id, 'sign-out');
    const bob = await services.accounts.signIn(corp, profile('bob-sub', 'bob@example.com', { sid: undefined }), OPEN_ORGANIZATION);
    await services.sessions.create({ userId: bob.user.id, identityId: bob.identity.id, providerId: 'corp' });

    const wiki = await services.appStore.create({ id: 'wiki', name: 'Wiki', publicUrl: WIKI_ORIGIN, upstream: 'http://127.0.0.1:9', policy: { allow: [{ domains: ['example.com'] }] } });
    // An app the 0011 migration set aside (its host was another's): only that migration writes these.
    await services.database.db
      .insertInto('apps_set_aside')
      .values({ id: 'wiki-copy', definition: JSON.stringify({ id: 'wiki-copy', publicUrl: WIKI_ORIGIN }), host: new URL(WIKI_ORIGIN).host, kept_app_id: 'wiki', created_at: 1, updated_at: 2, set_aside_at: 3 })
      .execute();
    // What the OpenID Provider keeps (provide/): a token by its hash, its grant, a logout owed, a client secret's hash.
    const db = services.database.db;
    const opStore = new OpStore(db);
    const iat = Math.floor(Date.now() / 1000);
    await opAdapterFactory(opStore)('AccessToken').upsert(OP_ACCESS_TOKEN, { jti: OP_ACCESS_TOKEN, kind: 'AccessToken', iat, exp: iat + 600, clientId: 'wiki', accountId: user.id, grantId: 'grant-1', scope: 'openid email' }, 600);
    await opStore.recordGrant({ grantId: 'grant-1', clientId: 'wiki', appId: 'wiki', userId: user.id, sessionId: session.id, sid: 'op-sid-1', subject: user.id, scopes: ['openid', 'email'], expiresAt: Date.now() + 600_000 });
    await db.insertInto('op_logout_deliveries').values({ id: 'delivery-1', grant_id: 'grant-0', client_id: 'wiki', app_id: 'wiki', user_id: user.id, session_id: ended.session.id, sid: 'op-sid-0', subject: user.id, uri: `${WIKI_ORIGIN}/logout`, reason: 'sign-out', created_at: 1, next_attempt_at: 1, claimed_until: null, delivered_at: 2, abandoned_at: null, last_error: null }).execute();
    await db.insertInto('op_client_secrets').values({ id: 'secret-1', app_id: 'wiki', secret_hash: 'hash-of-a-client-secret', hint: 'gh_abcd', created_at: 1, created_by: user.id, revoked_at: null }).execute();
    const appToken = await services.appSessions.create(session.id, 'wiki', WIKI_ORIGIN);
    await services.appSessions.issueCode({ sessionId: session.id, app: wiki, state: 'handshake-state', returnTo: '/pages' });
    await services.attempts.create({ state: 'state-1', bindingSecret: 'binding-1', providerId: 'corp', nonce: 'n', codeVerifier: 'v', returnTo: '/', purpose: 'sign-in' });
    // A console provider, its client secret sealed with the install's key (the issuer check is the only part replaced).
    const consoleProviders = new ProviderStore(
      { db: services.database.db, registry: services.providers, cipher: createTokenCipher(services.secrets), accounts: services.accounts, log },
      async () => ({ pkce: 'S256' }) as DiscoveryPreview,
    );
    await consoleProviders.create({ id: 'okta', name: 'Okta', issuer: 'https://okta.example', clientId: 'g', clientSecret: 'okta-client-secret' });
    // Published (as a passing test sign-in does): the copy keeps it offered.
    await consoleProviders.publish('okta', 'test');
    await services.signInSettings.update({ allowedDomains: ['example.com'], createUsers: false });
    await services.audit.record({ type: 'sign_in', actorUserId: user.id, targetUserId: user.id, sessionId: session.id, providerId: 'corp', request, details: { via: 'corp' } });
    await services.audit.record({ type: 'access_denied', outcome: 'failure', targetUserId: bob.user.id, appId: 'wiki' });
    await services.audit.record({ type: 'admin_granted', actorUserId: user.id, targetUserId: bob.user.id });
    // Three jtis under one provider and one under another: the two-column key is paged across batches.
    for (const jti of ['jti-a', 'jti-b', 'jti-c']) await services.logoutTokens.remember('corp', jti, Date.now() + 600_000);
    await services.logoutTokens.remember('partner', 'jti-a', Date.now() + 600_000);
    // The first key was made at start; a rotation leaves it retired and still published.
    const currentKid = await services.signingKeys.rotate();
    await extra?.(services);
    return { userId: user.id, sessionSecret: secret, sessionId: session.id, appToken, currentKid };
  } finally {
    await services.close();
  }
}

type Dump = Record<string, Array<Record<string, unknown>>>;

/** Every Gatehouse table, every row, in key order. */
async function dump(location: DatabaseLocation): Promise<Dump> {
  const handle = await openDatabase(configAt(location), undefined, { migrate: false });
  try {
    const db = handle.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const result: Dump = {};
    for (const table of COPY_ORDER) result[table] = await db.selectFrom(table).selectAll().orderBy(sql`1`).orderBy(sql`2`).execute();
    return result;
  } finally {
    await handle.close();
  }
}

const counts = (tables: Dump) => Object.fromEntries(Object.entries(tables).map(([table, rows]) => [table, rows.length]));

describe('copy-database', () => {
  it('copies an install from SQLite to PostgreSQL: every row the same, people still signed in, tokens and keys still decrypt', async () => {
    const from = sqliteAt('install.db');
    const install = await populate(from);
    const before = await dump(from);
    // Every table of the schema holds something, so the comparison below covers every one.
    for (const table of COPY_ORDER) expect(before[table]!.length, table).toBeGreaterThan(0);

    const to = await newPostgres();
    // Two rows per batch: every table with more than two rows is read and written in several.
    const summary = await copyDatabase({ from, to, config: configAt(from), batchRows: 2 });
    expect(summary.migrated).toEqual(KNOWN_MIGRATIONS);
    expect(Object.fromEntries(summary.tables.map(({ table, rows }) => [table, rows]))).toEqual(counts(before));

    const after = await dump(to);
    expect(after).toEqual(before);
    // Times stay numbers (bigint columns read as numbers on both), not strings.
    expect(typeof after.sessions![0]!.absolute_expires_at).toBe('number');

    const services = await createServices(configAt(to), log);
    try {
      // The cookie the browser holds from the SQLite install signs in on the PostgreSQL one.
      const current = await services.resolver.portal(install.sessionSecret, request);
      expect(current?.user.id).toBe(install.userId);
      expect(current?.session.id).toBe(install.sessionId);
      expect(services.sessions.refreshToken(current!.session)).toBe('refresh-token-of-ann');
      expect(services.sessions.idToken(current!.session)).toBe('id-token-of-ann');
      expect(services.sessions.accessToken(current!.session)).toBe('access-token-of-ann');
      // So does the app host's own cookie, and the session revoked before the move stays revoked.
      expect((await services.resolver.app(install.appToken, WIKI_ORIGIN, request))?.session.id).toBe(install.sessionId);
      const revoked = before.sessions!.find((row) => row.revoked_at !== null)!;
      expect((await services.sessions.findById(revoked.id as string))?.revoked_reason).toBe('sign-out');
      // Console state: the app, the provider with its decrypted secret, the settings, the signing key in use.
      expect(services.apps.get('wiki')?.name).toBe('Wiki');
      expect(services.providers.get('okta')).toMatchObject({ name: 'Okta', clientSecret: 'okta-client-secret' });
      expect(services.providers.publication('okta')).toMatchObject({ how: 'test' });
      expect(await services.signInSettings.get()).toEqual({ allowedDomains: ['example.com'], createUsers: false });
      expect(services.signingKeys.current().kid).toBe(install.currentKid);
      expect(services.signingKeys.publicJwks().keys).toHaveLength(2);
      // A replayed back-channel logout token is still recognised.
      expect(await services.logoutTokens.remember('corp', 'jti-b', Date.now() + 600_000)).toBe(false);
      // The OpenID Provider's token is still found by its bearer value, its payload still opens, its grant is live.
      const opStore = new OpStore(services.database.db);
      expect(await opAdapterFactory(opStore)('AccessToken').find(OP_ACCESS_TOKEN)).toMatchObject({ jti: OP_ACCESS_TOKEN, accountId: install.userId, grantId: 'grant-1' });
      expect((await opStore.liveGrantsOfSessions([install.sessionId])).map((grant) => grant.grantId)).toEqual(['grant-1']);
    } finally {
      await services.close();
    }
  });

  it('copies from PostgreSQL back to SQLite', async () => {
    const original = await newPostgres();
    const install = await populate(original);
    const to = sqliteAt('back.db');
    await copyDatabase({ from: original, to, config: configAt(original) });
    expect(await dump(to)).toEqual(await dump(original));
    const services = await createServices(configAt(to), log);
    try {
      expect((await services.resolver.portal(install.sessionSecret, request))?.user.id).toBe(install.userId);
    } finally {
      await services.close();
    }
  });

  it('covers every table the migrations create, each after the tables its foreign keys point to', async () => {
    const target = await newPostgres();
    const handle = await openDatabase(configAt(target));
    try {
      const tables = (await handle.db.introspection.getTables()).map((table) => table.name).filter((name) => !name.startsWith('gatehouse_migrations'));
      expect([...tables].sort()).toEqual([...COPY_ORDER].sort());
      const { rows } = await sql<{ child: string; parent: string }>`
        select tc.table_name as child, ccu.table_name as parent
        from information_schema.table_constraints tc
        join information_schema.constraint_column_usage ccu on ccu.constraint_name = tc.constraint_name
        where tc.constraint_type = 'FOREIGN KEY'`.execute(handle.db);
      expect(rows.length).toBeGreaterThan(0);
      for (const { child, parent } of rows) expect(COPY_ORDER.indexOf(parent as keyof Database), `${parent} before ${child}`).toBeLessThan(COPY_ORDER.indexOf(child as keyof Database));
    } finally {
      await handle.close();
    }
  });

  // Threat: a copy into a database that already serves (or served) an install would merge two
  // installs' users, sessions and keys, or overwrite one. It is refused, and nothing is changed.
  it('refuses a target that holds any row, and leaves it untouched', async () => {
    const from = sqliteAt('source-for-refusal.db');
    await populate(from);
    const target = await newPostgres();
    const handle = await openDatabase(configAt(target));
    await handle.db.insertInto('settings').values({ key: 'signIn', value: '{"allowedDomains":[],"createUsers":true}', updated_at: 1 }).execute();
    await handle.close();
    const before = await dump(target);

    await expect(copyDatabase({ from, to: target, config: configAt(from) })).rejects.toThrow(/already holds Gatehouse data \(in settings\).*nothing was changed/);
    expect(await dump(target)).toEqual(before);

    // The same for a SQLite target that is a whole install.
    const sqliteTarget = sqliteAt('other-install.db');
    await populate(sqliteTarget);
    const sqliteBefore = await dump(sqliteTarget);
    await expect(copyDatabase({ from, to: sqliteTarget, config: configAt(from) })).rejects.toBeInstanceOf(CopyRefusedError);
    expect(await dump(sqliteTarget)).toEqual(sqliteBefore);
  });

  // The same threat where Gatehouse's tables live in a schema of their own (search_path in the URL):
  // they are found where Gatehouse's queries find them, not looked for in "public" only.
  it('refuses a target whose Gatehouse tables are in another schema of the search_path', async () => {
    const from = sqliteAt('source-for-schema.db');
    await populate(from);
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('create schema gh');
    await client.end();
    const target: DatabaseLocation = { kind: 'postgres', url: `${url}?options=${encodeURIComponent('-c search_path=gh')}` };
    await populate(target);
    const before = await dump(target);
    expect(before.users!.length).toBeGreaterThan(0);

    await expect(copyDatabase({ from, to: target, config: configAt(from) })).rejects.toThrow(/already holds Gatehouse data/);
    expect(await dump(target)).toEqual(before);
  });

  // Threat: a copy that stops halfway would leave an install with users but no sessions, or sessions
  // without their keys, that nodes would then start on. A value SQLite stores but PostgreSQL refuses (a
  // NUL character in text) fails the copy at the audit log, after the accounts and sessions went in:
  // the whole copy is rolled back.
  it('leaves the target without a row when the copy fails partway', async () => {
    const from = sqliteAt('with-nul.db');
    await populate(from, async (services) => {
      for (let index = 0; index < 5; index++) await services.audit.record({ type: 'sign_in', targetUserId: 'u', request: { headers: { 'user-agent': `agent ${index}` } } });
      // A value SQLite keeps and PostgreSQL refuses (the stores no longer write one: written here directly).
      await services.database.db
        .insertInto('audit_events')
        .values({ id: 'zz-last', time: Date.now(), type: 'sign_in', outcome: 'success', actor_user_id: null, target_user_id: 'u', session_id: null, provider_id: null, app_id: null, ip: null, user_agent: 'agent\u0000with a NUL', details: '{}' })
        .execute();
    });
    const to = await newPostgres();

    await expect(copyDatabase({ from, to, config: configAt(from), batchRows: 2 })).rejects.toThrow(/copying audit_events failed after \d+ row\(s\): .*0x00/);
    const after = await dump(to);
    expect(counts(after)).toEqual(Object.fromEntries(COPY_ORDER.map((table) => [table, 0])));
    // The schema was created (the target is an empty, current Gatehouse database): a fixed source copies into it.
    const handle = await openDatabase(configAt(to), undefined, { migrate: false });
    expect(await executedMigrations(handle.db)).toEqual(KNOWN_MIGRATIONS);
    await handle.close();
  });

  it('refuses a source whose schema is older or newer than this build, and a source that is not there', async () => {
    const older = sqliteAt('older.db');
    await populate(older);
    let handle = await openDatabase(configAt(older));
    await handle.db.deleteFrom('gatehouse_migrations' as never).where('name' as never, '=', KNOWN_MIGRATIONS.at(-1) as never).execute();
    await handle.close();
    await expect(copyDatabase({ from: older, to: await newPostgres(), config: configAt(older) })).rejects.toThrow(
      new RegExp(`has an older schema \\(it lacks ${KNOWN_MIGRATIONS.at(-1)}\\): run \`gatehouse migrate\` on it`),
    );

    const newer = sqliteAt('newer.db');
    await populate(newer);
    handle = await openDatabase(configAt(newer));
    await sql`insert into gatehouse_migrations (name, timestamp) values ('9999_from_the_future', '2099-01-01')`.execute(handle.db);
    await handle.close();
    await expect(copyDatabase({ from: newer, to: await newPostgres(), config: configAt(newer) })).rejects.toThrow(/was migrated by a newer Gatehouse \(9999_from_the_future\)/);

    const missing = sqliteAt('missing.db');
    await expect(copyDatabase({ from: missing, to: await newPostgres(), config: configAt(older) })).rejects.toThrow(/does not exist/);
    expect(existsSync((missing as { file: string }).file)).toBe(false);
  });

  // Gatehouse's tables use text ids today; a later table with a serial or identity column must not
  // hand out, after a move, numbers the copied rows already hold.
  it('advances PostgreSQL sequences past the copied values', async () => {
    const from = await newPostgres();
    await populate(from);
    const to = await newPostgres();
    for (const location of [from, to]) {
      const handle = await openDatabase(configAt(location));
      await sql`alter table audit_events add column seq bigint generated by default as identity (start with 100)`.execute(handle.db);
      await handle.close();
    }
    await copyDatabase({ from, to, config: configAt(from) });
    const handle = await openDatabase(configAt(to));
    try {
      const { rows } = await sql<{ copied: number; next: number }>`select (select max(seq) from audit_events) as copied, nextval(pg_get_serial_sequence('audit_events', 'seq')) as next`.execute(handle.db);
      expect(rows[0]!.copied).toBeGreaterThanOrEqual(102);
      expect(rows[0]!.next).toBe(rows[0]!.copied + 1);
    } finally {
      await handle.close();
    }
  });

  it('reads sqlite:<file> and postgres:// locations and refuses anything else', () => {
    expect(parseDatabaseLocation('sqlite:data/gatehouse.db', '--from')).toEqual({ kind: 'sqlite', file: path.resolve('data/gatehouse.db') });
    expect(parseDatabaseLocation('postgresql://gh@db/gatehouse', '--to')).toEqual({ kind: 'postgres', url: 'postgresql://gh@db/gatehouse' });
    expect(() => parseDatabaseLocation('sqlite::memory:', '--to')).toThrow(CopyRefusedError);
    expect(() => parseDatabaseLocation('postgres://gh:hunter2@db', '--to')).toThrow(/--to must be a postgres:\/\/ URL with a host and a database name/);
    expect(() => parseDatabaseLocation('postgres://gh:hunter2@db', '--to')).not.toThrow(/hunter2/);
    expect(() => parseDatabaseLocation('mysql://db/gatehouse', '--to')).toThrow(CopyRefusedError);
  });

  // Threat: the password of the target's URL printed to a terminal, a CI log or a shell history
  // collector. The command prints the URL with the password replaced.
  it('runs as a command: copies, prints a row count per table and no password, then refuses to copy again', async () => {
    const from = sqliteAt('cli.db');
    await populate(from);
    const configFile = path.join(dir, 'cli.yaml');
    writeFileSync(configFile, JSON.stringify({ mode: 'production', publicUrl: 'https://gatehouse.example.com', dataDir: dir, secrets }));
    const target = await newPostgres();
    // Trust authentication on the test server: the password is accepted and never checked.
    const withPassword = (target as { url: string }).url.replace('gatehouse@', 'gatehouse:s3cret-pw@');
    const run = (...args: string[]) =>
      new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [MAIN, 'copy-database', '--config', configFile, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => resolve({ code, output }));
      });

    const first = await run('--from', `sqlite:${(from as { file: string }).file}`, '--to', withPassword);
    expect(first.output).not.toContain('s3cret-pw');
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain(`to PostgreSQL ${withPassword.replace('s3cret-pw', '***')}`);
    const source = counts(await dump(from));
    for (const table of COPY_ORDER) expect(first.output).toMatch(new RegExp(`^  ${table} +${source[table]}$`, 'm'));
    expect(first.output).toMatch(/same secrets\.cookieKey and secrets\.encryptionKeys/);

    const again = await run('--from', `sqlite:${(from as { file: string }).file}`, '--to', withPassword);
    expect(again.code, again.output).toBe(2);
    expect(again.output).toMatch(/already holds Gatehouse data/);
    expect(again.output).not.toContain('s3cret-pw');
    // Two processes starting Node, Kysely and pg.
  }, 30_000);
});
