import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type KyselyConfig } from 'kysely';
import pg from 'pg';
import type { Config } from '../config/schema.js';
import type { DialectName } from './dialect.js';
import { withPreparedStatements } from './preparedStatements.js';
import { withStatementCache } from './statementCache.js';
import { ensurePrivateDir, ensurePrivateFile, tightenIfExists, type PermissionWarning } from './filePermissions.js';
import { migrateToLatest, SchemaTooNewError } from './migrate.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  dialect: DialectName;
  /** Answers whether the database can run a query now (for /readyz). */
  ping(): Promise<boolean>;
  /**
   * On PostgreSQL: a new connection of its own, outside the pool, configured like the pool's (for the
   * change notifications' LISTEN, events/pgChanges.ts). Undefined on SQLite.
   */
  newClient?: () => pg.Client;
  /** For metrics, read when scraped: the pool (PostgreSQL) and the queries that failed so far. */
  stats(): DatabaseStats;
  close(): Promise<void>;
}

export interface DatabaseStats {
  dialect: DialectName;
  /** PostgreSQL's pool: connections open and idle, queries waiting for one, and its size. */
  pool?: { total: number; idle: number; waiting: number; max: number };
  /** Queries that failed; `busy`: of those, SQLite's "database is locked" past the busy timeout. */
  errors: { total: number; busy: number };
}

/** Counts the queries that fail, through Kysely's log hook (which sees every query, and only logs here). */
function errorCounter(): { errors: DatabaseStats['errors']; log: KyselyConfig['log'] } {
  const errors = { total: 0, busy: 0 };
  return {
    errors,
    log(event) {
      if (event.level !== 'error') return;
      errors.total++;
      const code = (event.error as { code?: unknown } | null)?.code;
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') errors.busy++;
    },
  };
}

export interface OpenOptions {
  /** Bring the schema up to date (default). `false` only checks that it is not newer than this build. */
  migrate?: boolean;
}

type Log = { warn: PermissionWarning };

export function sqlitePath(config: Config): string {
  return config.database.path ?? path.join(config.dataDir, 'gatehouse.db');
}

/** The database URL as it may be shown: the password (in the URL or the query) replaced by "***". */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) if (/pass|secret|key/i.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}

/** Where the configured database is, for messages (never with a password). */
export function describeDatabase(config: Config): string {
  return config.database.url ? `PostgreSQL ${redactDatabaseUrl(config.database.url)}` : `SQLite ${sqlitePath(config)}`;
}

/**
 * Opens the configured database — SQLite (the embedded default) or PostgreSQL (`database.url`) — and
 * brings its schema up to date (storage/migrate.ts). A schema newer than this build stops it with
 * SchemaTooNewError.
 */
export async function openDatabase(config: Config, log?: Log, options: OpenOptions = {}): Promise<DatabaseHandle> {
  const handle = config.database.url ? openPostgres(config, log) : openSqlite(config, log);
  try {
    await migrateToLatest(handle.db, { migrate: options.migrate ?? true });
  } catch (error) {
    await handle.close().catch(() => undefined);
    if (error instanceof SchemaTooNewError) throw error;
    const reason = error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
    throw new Error(`cannot open the database (${describeDatabase(config)}): ${reason}`, { cause: error });
  }
  return handle;
}

/** SQLite's page cache, per connection (its default is 2 MiB). */
export const SQLITE_CACHE_KIB = 32 * 1024;
/** How much of the database file SQLite maps into memory instead of reading it page by page. */
export const SQLITE_MMAP_BYTES = 256 * 1024 * 1024;

function openSqlite(config: Config, log: Log | undefined): DatabaseHandle {
  const file = sqlitePath(config);
  const warn: PermissionWarning = log ? (details, message) => log.warn(details, message) : (_details, message) => process.emitWarning(message);
  const onDisk = file !== ':memory:';
  if (onDisk) {
    ensurePrivateDir(path.dirname(file), warn);
    // Created 0600 before SQLite opens it: SQLite would create it with the umask's mode.
    ensurePrivateFile(file, warn);
  }
  const sqlite = new SQLite(file);
  // WAL lets readers proceed during a write; foreign keys are off by default in SQLite.
  sqlite.pragma('journal_mode = WAL');
  // SQLite gives -wal and -shm the database file's mode; ones left by an earlier run may be looser.
  if (onDisk) for (const suffix of ['-wal', '-shm']) tightenIfExists(`${file}${suffix}`, warn);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Large tables (docs/configuration.md, "SQLite with large tables"): a session check walks a few
  // B-tree pages of indexes that outgrow SQLite's default 2 MiB page cache at a few hundred thousand
  // sessions; each page missed is then a read() of the operating system's cache. A 32 MiB page cache
  // keeps the upper levels and the hot pages, and the file mapped into memory (256 MiB of it) turns
  // reads of the rest into memory reads: the kernel's page cache, shared, not the heap. (Measured with
  // bench/large-tables.ts: the session read over 1,100,000 sessions costs 1.08 × one over 100,000, about
  // 1.5 µs more; without the map 1.13 ×; neither a 256 MiB page cache nor a 1 GiB map did better.)
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  if (onDisk) sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
  dropPlannerSamples(sqlite, warn);
  const counter = errorCounter();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), log: counter.log });
  return handleOf(db, 'sqlite', () => ({ dialect: 'sqlite', errors: counter.errors }));
}

/**
 * Removes the samples ANALYZE leaves in `sqlite_stat4`. better-sqlite3 builds SQLite with
 * SQLITE_ENABLE_STAT4, and with samples present SQLite plans a statement again whenever a value bound to
 * an indexed column's comparison changes, that is on nearly every execution: the session read of a
 * forward-auth check that misses the cache (four joined tables, forty columns) went from about 10 to
 * 50 µs of CPU, the same plan each time (measured with bench/large-tables.ts). Gatehouse never runs
 * ANALYZE; an operator or a tool (`PRAGMA optimize`) may. The row counts in `sqlite_stat1` stay: they
 * are all the planner needs for Gatehouse's queries, which look rows up by unique keys.
 */
function dropPlannerSamples(sqlite: SQLite.Database, warn: PermissionWarning): void {
  const hasSamples = sqlite.prepare("select 1 from sqlite_schema where type = 'table' and name = 'sqlite_stat4'").get() !== undefined && sqlite.prepare('select 1 from sqlite_stat4 limit 1').get() !== undefined;
  if (!hasSamples) return;
  sqlite.exec('delete from sqlite_stat4; analyze sqlite_schema');
  warn({ table: 'sqlite_stat4' }, 'removed the query planner samples ANALYZE had left in the database: with them SQLite plans every session read again (docs/configuration.md, "SQLite with large tables")');
}

/**
 * PostgreSQL's bigint (int8: epoch milliseconds) and count(*) arrive as strings from `pg`, which cannot
 * know they fit a JavaScript number. Gatehouse's do (times in ms, counts), so this pool — and only this
 * pool, not every `pg` user in the process — reads them as numbers, like SQLite does.
 */
const INT8_OID = 20;
const gatehouseTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

function openPostgres(config: Config, log: Log | undefined): DatabaseHandle {
  const { url, password, pool: poolOptions, statementTimeout } = config.database;
  const connection = {
    connectionString: url,
    ...(password !== undefined ? { password } : {}),
    statement_timeout: statementTimeout,
    connectionTimeoutMillis: 10_000,
    types: gatehouseTypes,
  };
  const pool = new pg.Pool({ ...connection, max: poolOptions.max, application_name: 'gatehouse' });
  // A connection the server drops while idle in the pool is replaced on the next query; without a
  // listener the error would end the process.
  pool.on('error', (error) => log?.warn({ err: error.message }, 'a PostgreSQL connection in the pool failed'));
  // The pool listens only to the connections it holds idle; one that is checked out (a query running,
  // or a transaction between two statements) when the server goes away — a restart, a failover,
  // pg_terminate_backend — emits 'error' with nobody listening, which would end the whole process.
  // Its failure already reaches the query it was running (or the next one: the connection is no longer
  // queryable, and the pool drops it when it comes back): that request answers 503 store_unavailable.
  pool.on('connect', (client) => client.on('error', () => {}));
  const counter = errorCounter();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPreparedStatements(pool) }), log: counter.log });
  const stats = (): DatabaseStats => ({
    dialect: 'postgres',
    pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolOptions.max },
    errors: counter.errors,
  });
  return {
    ...handleOf(db, 'postgres', stats),
    // TCP keepalive too: a connection that only listens must notice a peer that vanished.
    newClient: () => new pg.Client({ ...connection, application_name: 'gatehouse-changes', keepAlive: true, keepAliveInitialDelayMillis: 10_000 }),
  };
}

function handleOf(db: Db, dialect: DialectName, stats: () => DatabaseStats): DatabaseHandle {
  return {
    db,
    dialect,
    stats,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}
