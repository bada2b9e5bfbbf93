import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { openDatabase, redactDatabaseUrl, type DatabaseHandle } from '../../src/storage/database.js';
import { executedMigrations, KNOWN_MIGRATIONS, MIGRATION_LOCK_KEY, migrateToLatest, SchemaTooNewError } from '../../src/storage/migrate.js';
import * as providerPublication from '../../src/storage/migrations/0009_provider_publication.js';
import * as appHostUnique from '../../src/storage/migrations/0011_app_host_unique.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * Opening the database on SQLite and PostgreSQL: the same migrations, several nodes starting at once,
 * a schema newer than this build, and what the PostgreSQL connection is set up with.
 */

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const sqliteConfig = () => parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} });
const postgresConfig = (url: string, database: Record<string, unknown> = {}) => parseConfig({ dataDir: '.', database: { url, ...database } }, { env: {} });

const backends: Array<[string, () => Promise<DatabaseHandle>]> = [
  ['SQLite', () => openDatabase(sqliteConfig())],
  ['PostgreSQL', async () => openDatabase(postgresConfig(await server.createDatabase()))],
];

describe.each(backends)('migrations on %s', (_name, open) => {
  it('run every known migration, and find nothing to do the next time', async () => {
    const handle = await open();
    try {
      expect(await executedMigrations(handle.db)).toEqual([...KNOWN_MIGRATIONS]);
      expect(await migrateToLatest(handle.db)).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('0009 keeps the console providers created before it offered, and new ones start hidden', async () => {
    const handle = await open();
    try {
      // As it was before 0009: a console provider row without publication columns.
      await providerPublication.down(handle.db as never);
      await sql`insert into providers (id, definition, created_at, updated_at) values ('corp', '{}', 1000, 2000)`.execute(handle.db);
      await providerPublication.up(handle.db as never);
      await handle.db.insertInto('providers').values({ id: 'later', definition: '{}', created_at: 3000, updated_at: 3000, published_at: null, published_how: null, client_secret_enc: null, private_key_enc: null }).execute();
      const rows = await handle.db.selectFrom('providers').select(['id', 'published_at', 'published_how']).orderBy('id').execute();
      expect(rows.map((row) => [row.id, row.published_at === null ? null : Number(row.published_at), row.published_how])).toEqual([
        ['corp', 1000, 'existing'],
        ['later', null, null],
      ]);
    } finally {
      await handle.close();
    }
  });

  it('0011 keeps the older of two console apps with one host and sets the later one aside, deleting nothing', async () => {
    const handle = await open();
    try {
      // As it was before 0011: two creates at once could give one host two apps.
      await appHostUnique.down(handle.db as never);
      const app = (id: string, publicUrl: string) => JSON.stringify({ id, name: id, publicUrl, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
      const rows: Array<[string, string, number]> = [
        ['wiki', app('wiki', 'https://wiki.example.com'), 1000],
        ['wiki-copy', app('wiki-copy', 'https://WIKI.example.com:443'), 2000],
        // Two of the same moment: the id first in code-point order keeps it ("b-docs" < "b_docs" < "bdocs"; a language's collation says otherwise).
        ['b_docs', app('b_docs', 'https://docs.example.com'), 3000],
        ['b-docs', app('b-docs', 'https://docs.example.com'), 3000],
        ['bdocs', app('bdocs', 'https://docs.example.com'), 3000],
        ['vault', app('vault', 'https://vault.example.com'), 4000],
        ['broken', '{not json', 5000],
      ];
      for (const [id, definition, created] of rows) {
        await sql`insert into apps (id, definition, created_at, updated_at) values (${id}, ${definition}, ${created}, ${created + 1})`.execute(handle.db);
      }
      await appHostUnique.up(handle.db as never);

      const kept = await handle.db.selectFrom('apps').select(['id', 'host']).orderBy('id').execute();
      expect(kept).toEqual([
        { id: 'b-docs', host: 'docs.example.com' },
        { id: 'broken', host: null },
        { id: 'vault', host: 'vault.example.com' },
        { id: 'wiki', host: 'wiki.example.com' },
      ]);
      const setAside = await handle.db.selectFrom('apps_set_aside').selectAll().orderBy('id').execute();
      expect(setAside.map(({ id, host, kept_app_id, definition, created_at, updated_at }) => ({ id, host, kept_app_id, definition, created_at: Number(created_at), updated_at: Number(updated_at) }))).toEqual([
        { id: 'b_docs', host: 'docs.example.com', kept_app_id: 'b-docs', definition: rows[2]![1], created_at: 3000, updated_at: 3001 },
        { id: 'bdocs', host: 'docs.example.com', kept_app_id: 'b-docs', definition: rows[4]![1], created_at: 3000, updated_at: 3001 },
        { id: 'wiki-copy', host: 'wiki.example.com', kept_app_id: 'wiki', definition: rows[1]![1], created_at: 2000, updated_at: 2001 },
      ]);
      // The admins are told, in the audit log, with the definition set aside.
      const events = await handle.db.selectFrom('audit_events').selectAll().where('type', '=', 'app_set_aside').orderBy('app_id').execute();
      expect(events.map((event) => [event.app_id, JSON.parse(event.details)])).toEqual([
        ['b_docs', expect.objectContaining({ host: 'docs.example.com', keptApp: 'b-docs', keptIn: 'apps_set_aside', definition: JSON.parse(rows[2]![1]) })],
        ['bdocs', expect.objectContaining({ host: 'docs.example.com', keptApp: 'b-docs' })],
        ['wiki-copy', expect.objectContaining({ host: 'wiki.example.com', keptApp: 'wiki', reason: expect.stringContaining('"wiki"') })],
      ]);
      // From now on the database itself refuses a second app on a host.
      const second = sql`insert into apps (id, definition, host, created_at, updated_at) values ('other', '{}', 'vault.example.com', 1, 1)`.execute(handle.db);
      await expect(second).rejects.toMatchObject({ code: expect.stringMatching(/^(23505|SQLITE_CONSTRAINT_UNIQUE)$/) });
    } finally {
      await handle.close();
    }
  });

  it('refuse a schema newer than this build, saying what to do', async () => {
    const handle = await open();
    try {
      await sql`insert into gatehouse_migrations (name, timestamp) values ('9999_from_the_future', '2099-01-01T00:00:00.000Z')`.execute(handle.db);
      const refusal = await migrateToLatest(handle.db).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(SchemaTooNewError);
      expect((refusal as Error).message).toMatch(/database schema is newer than this Gatehouse .*9999_from_the_future.*upgrade Gatehouse .* or restore a backup/);
      // Checking only (migrate: false) refuses it too.
      await expect(migrateToLatest(handle.db, { migrate: false })).rejects.toBeInstanceOf(SchemaTooNewError);
      // Kysely alone calls it corrupted, allowUnorderedMigrations or not: hence the check before it.
      const migrator = new Migrator({
        db: handle.db,
        provider: { getMigrations: async () => Object.fromEntries(KNOWN_MIGRATIONS.map((name) => [name, { up: async () => undefined }])) },
        migrationTableName: 'gatehouse_migrations',
        migrationLockTableName: 'gatehouse_migrations_lock',
        allowUnorderedMigrations: true,
      });
      expect(String((await migrator.migrateToLatest()).error)).toContain('corrupted migrations: previously executed migration 9999_from_the_future is missing');
    } finally {
      await handle.close();
    }
  });
});

describe('PostgreSQL', () => {
  it('several nodes starting at once on an empty database: one migrates, the others find nothing to do', async () => {
    const url = await server.createDatabase();
    const handles = await Promise.all(Array.from({ length: 4 }, () => openDatabase(postgresConfig(url, { pool: { max: 2 } }), undefined, { migrate: false })));
    try {
      const ran = await Promise.all(handles.map((handle) => migrateToLatest(handle.db)));
      expect(ran.filter((names) => names.length > 0)).toEqual([[...KNOWN_MIGRATIONS]]);
      expect(await executedMigrations(handles[0]!.db)).toEqual([...KNOWN_MIGRATIONS]);
    } finally {
      await Promise.all(handles.map((handle) => handle.close()));
    }
  });

  it('a node starting while another migrates waits for it, longer than the statement timeout', async () => {
    const url = await server.createDatabase();
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
      let opened = false;
      const starting = openDatabase(postgresConfig(url, { statementTimeout: '200ms' })).then((handle) => {
        opened = true;
        return handle;
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(opened).toBe(false);
      await other.query(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
      const handle = await starting;
      try {
        expect(await executedMigrations(handle.db)).toEqual([...KNOWN_MIGRATIONS]);
        // The connection that migrated went back to the pool with the configured timeout.
        const timeouts = await Promise.all([1, 2, 3].map(() => sql<{ t: string }>`select current_setting('statement_timeout') as t`.execute(handle.db)));
        expect(timeouts.map((result) => result.rows[0]!.t)).toEqual(['200ms', '200ms', '200ms']);
      } finally {
        await handle.close();
      }
    } finally {
      await other.end();
    }
  });

  it('reads bigint and count(*) as numbers on its own pool only; sets the timeout and application name', async () => {
    const url = await server.createDatabase();
    const handle = await openDatabase(postgresConfig(url, { statementTimeout: '300ms', pool: { max: 3 } }));
    try {
      const { rows } = await sql<{ big: unknown; n: unknown; timeout: string; app: string }>`
        select 1750000000000::bigint as big, (select count(*) from gatehouse_migrations) as n,
               current_setting('statement_timeout') as timeout, current_setting('application_name') as app`.execute(handle.db);
      expect(rows[0]).toEqual({ big: 1_750_000_000_000, n: KNOWN_MIGRATIONS.length, timeout: '300ms', app: 'gatehouse' });
      await expect(sql`select pg_sleep(2)`.execute(handle.db)).rejects.toThrow(/statement timeout/);
      expect(await handle.ping()).toBe(true);
      // Any other pg user in the process keeps pg's default (a string).
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        expect((await other.query('select 1750000000000::bigint as big')).rows[0]).toEqual({ big: '1750000000000' });
      } finally {
        await other.end();
      }
    } finally {
      await handle.close();
    }
    expect(await handle.ping()).toBe(false);
  });

  it('a server it cannot reach: a clear error without the password', async () => {
    const url = `postgres://gatehouse:s3cret-pw@127.0.0.1:1/gatehouse`;
    const failure = (await openDatabase(postgresConfig(url)).then(
      () => undefined,
      (error: unknown) => error,
    )) as Error;
    expect(failure).toBeInstanceOf(Error);
    expect(failure.message).toContain('cannot open the database (PostgreSQL postgres://gatehouse:***@127.0.0.1:1/gatehouse)');
    expect(failure.message).not.toContain('s3cret-pw');
  });
});

describe('database configuration', () => {
  const parse = (database: unknown, env: Record<string, string> = {}) => parseConfig({ dataDir: '/data', database }, { env });
  const problems = (database: unknown, env: Record<string, string> = {}) => {
    try {
      parse(database, env);
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  };

  it('SQLite by default, PostgreSQL with a url (pool and statement timeout defaulted)', () => {
    expect(parse(undefined).database).toEqual({ driver: 'sqlite', pool: { max: 10 }, statementTimeout: 30_000 });
    expect(parse({ driver: 'sqlite', path: 'g.db' }).database).toMatchObject({ driver: 'sqlite', path: '/data/g.db' });
    expect(parse({ url: 'postgresql://db.internal/gatehouse' }).database).toEqual({ driver: 'postgres', url: 'postgresql://db.internal/gatehouse', pool: { max: 10 }, statementTimeout: 30_000 });
    expect(parse({ url: 'postgres://g@db/gh', password: 'pw', pool: { max: 25 }, statementTimeout: '5s' }).database).toMatchObject({ password: 'pw', pool: { max: 25 }, statementTimeout: 5000 });
  });

  it('refuses a url that is not PostgreSQL, both url and path, and a driver that contradicts the url — never repeating the url', () => {
    const bad = problems({ url: 'mysql://root:hunter2@db/gh' });
    expect(bad).toEqual([expect.stringContaining('database.url: must be a postgres:// or postgresql:// URL')]);
    expect(bad.join()).not.toContain('hunter2');
    expect(problems({ url: 'postgres://db' })).toEqual([expect.stringContaining('database.url')]);
    expect(problems({ url: 'postgres://db/gh', path: 'g.db' })).toEqual([expect.stringContaining('database.path: is for SQLite')]);
    expect(problems({ driver: 'postgres' })).toEqual([expect.stringContaining('database.url: is required with driver: postgres')]);
    expect(problems({ driver: 'sqlite', url: 'postgres://db/gh' })).toEqual([expect.stringContaining('database.driver')]);
    expect(problems({ password: 'pw' })).toEqual([expect.stringContaining('database.password')]);
  });

  it('GATEHOUSE_DATABASE_URL overrides the file (its SQLite path included); ${ENV} fills a password', () => {
    const env = { GATEHOUSE_DATABASE_URL: 'postgres://gatehouse@db/gh' };
    expect(parse({ path: 'g.db', pool: { max: 4 } }, env).database).toEqual({ driver: 'postgres', url: 'postgres://gatehouse@db/gh', pool: { max: 4 }, statementTimeout: 30_000 });
    expect(parse({ url: 'postgres://gatehouse:${PGPASS}@db/gh' }, { PGPASS: 'pw' }).database.url).toBe('postgres://gatehouse:pw@db/gh');
  });

  it('redacts the password of a URL (and password-like query parameters)', () => {
    expect(redactDatabaseUrl('postgres://u:p%40ss@db:5433/gh?sslmode=require&sslpassword=x')).toBe('postgres://u:***@db:5433/gh?sslmode=require&sslpassword=***');
    expect(redactDatabaseUrl('postgres://u@db/gh')).toBe('postgres://u@db/gh');
  });
});
