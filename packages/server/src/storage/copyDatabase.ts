import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import { openDatabase, redactDatabaseUrl, type DatabaseHandle } from './database.js';
import { dialectOf } from './dialect.js';
import { executedMigrations, KNOWN_MIGRATIONS, migrateToLatest, SchemaTooNewError } from './migrate.js';
import type { Database } from './schema.js';

/**
 * `gatehouse copy-database`: moves an install from one database to another (SQLite to PostgreSQL when
 * going multi-node, or back). Every Gatehouse table is copied as it is — session hashes, encrypted
 * tokens and keys, times — so people stay signed in, provided the nodes on the new database use the
 * same `secrets` as the old install (the ciphertexts are copied, never decrypted).
 *
 * The copy is all or nothing: the whole of it is one transaction on the target, so a failure (a value
 * the target refuses, a dropped connection) leaves the target without a row. The source is read in one
 * snapshot (a read transaction; REPEATABLE READ on PostgreSQL), so a source still in use is copied as
 * it was at one instant — what it writes afterwards is not copied: stop the old install first.
 */

/** Where a database is, as `--from`/`--to` name it: `sqlite:<file>` or a postgres:// URL. */
export type DatabaseLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** The copy cannot start: wrong arguments, a source or target it must not touch. Nothing was written. */
export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError';
}

/**
 * Every table of storage/schema.ts with its key (the order it is read in, batch after batch) and the
 * tables its foreign keys point to, which are copied before it. The mapped type makes a table added to
 * the schema without an entry here a compile error.
 */
const TABLES: { [T in keyof Database]: { key: readonly (keyof Database[T] & string)[]; references: readonly (keyof Database)[] } } = {
  users: { key: ['id'], references: [] },
  identities: { key: ['id'], references: ['users'] },
  sessions: { key: ['id'], references: ['users'] },
  app_sessions: { key: ['token_hash'], references: ['sessions'] },
  app_codes: { key: ['code_hash'], references: [] },
  sign_in_attempts: { key: ['state_hash'], references: [] },
  audit_events: { key: ['id'], references: [] },
  logout_token_jtis: { key: ['provider_id', 'jti'], references: [] },
  signing_keys: { key: ['kid'], references: [] },
  apps: { key: ['id'], references: [] },
  apps_set_aside: { key: ['id'], references: [] },
  providers: { key: ['id'], references: [] },
  settings: { key: ['key'], references: [] },
  op_payloads: { key: ['model', 'id_hash'], references: [] },
  op_grants: { key: ['grant_id'], references: [] },
  op_logout_deliveries: { key: ['id'], references: [] },
  op_client_secrets: { key: ['id'], references: [] },
};

export type TableName = keyof Database;

/** The tables in the order they are copied: every table after the tables it references. */
export const COPY_ORDER: readonly TableName[] = (() => {
  const order: TableName[] = [];
  const visit = (table: TableName, path: readonly TableName[]) => {
    if (order.includes(table)) return;
    if (path.includes(table)) throw new Error(`foreign keys form a cycle: ${[...path, table].join(' → ')}`);
    for (const referenced of TABLES[table].references) visit(referenced, [...path, table]);
    order.push(table);
  };
  for (const table of Object.keys(TABLES) as TableName[]) visit(table, []);
  return order;
})();

/** Rows read and written per statement: well under SQLite's and PostgreSQL's limits on parameters. */
const BATCH_ROWS = 500;

/** Parses `--from`/`--to`: `sqlite:<file>` (relative to the working folder) or `postgres://…`. */
export function parseDatabaseLocation(value: string, option: string): DatabaseLocation {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    if (!url?.hostname || url.pathname.length <= 1) {
      // The value is not repeated: it may hold a password.
      throw new CopyRefusedError(`${option} must be a postgres:// URL with a host and a database name (percent-encode special characters)`);
    }
    return { kind: 'postgres', url: value };
  }
  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length);
    if (file === '' || file === ':memory:') throw new CopyRefusedError(`${option} must name a SQLite file: sqlite:<path to gatehouse.db>`);
    return { kind: 'sqlite', file: path.resolve(file) };
  }
  throw new CopyRefusedError(`${option} must be sqlite:<file> or a postgres:// URL`);
}

/** A location as it may be printed (never with a password). */
export function describeLocation(location: DatabaseLocation): string {
  return location.kind === 'sqlite' ? `SQLite ${location.file}` : `PostgreSQL ${redactDatabaseUrl(location.url)}`;
}

function sameLocation(a: DatabaseLocation, b: DatabaseLocation): boolean {
  if (a.kind === 'sqlite' && b.kind === 'sqlite') return a.file === b.file;
  if (a.kind === 'postgres' && b.kind === 'postgres') {
    const [x, y] = [new URL(a.url), new URL(b.url)];
    return x.hostname === y.hostname && (x.port || '5432') === (y.port || '5432') && x.pathname === y.pathname;
  }
  return false;
}

/** The configuration's database settings (pool, statement timeout) with the location in place of its own. */
function configFor(config: Config, location: DatabaseLocation): Config {
  const { pool, statementTimeout } = config.database;
  const database: Config['database'] =
    location.kind === 'sqlite'
      ? { driver: 'sqlite', path: location.file, pool, statementTimeout }
      : // The password comes from the URL or PGPASSWORD, never from the configured database's.
        { driver: 'postgres', url: location.url, pool, statementTimeout };
  return { ...config, database };
}

export interface CopyOptions {
  from: DatabaseLocation;
  to: DatabaseLocation;
  /** Supplies the pool size and statement timeout (database.pool, database.statementTimeout). */
  config: Config;
  /** Rows per batch (default 500). */
  batchRows?: number;
}

export interface CopySummary {
  /** Rows copied per table, in the order copied. */
  tables: Array<{ table: TableName; rows: number }>;
  /** Migrations run on the target to bring it to this build's schema. */
  migrated: string[];
}

/**
 * Copies every Gatehouse table from `from` to `to`. Refuses (CopyRefusedError, nothing written) a
 * source whose schema is not exactly this build's and a target that holds any row; the target's schema
 * is brought up to date first.
 */
export async function copyDatabase({ from, to, config, batchRows = BATCH_ROWS }: CopyOptions): Promise<CopySummary> {
  if (sameLocation(from, to)) throw new CopyRefusedError('--from and --to name the same database');
  if (from.kind === 'sqlite' && !(existsSync(from.file) && statSync(from.file).isFile())) {
    throw new CopyRefusedError(`the source ${describeLocation(from)} does not exist`);
  }
  const source = await open(config, from, 'source');
  try {
    await checkSourceSchema(source.db, from);
    const target = await open(config, to, 'target');
    try {
      // Before migrating, so a target that is refused is left exactly as it was.
      await refuseRows(target.db, to);
      const migrated = await migrateToLatest(target.db);
      const tables = await copyTables(source.db, target.db, to, batchRows);
      return { tables, migrated };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function open(config: Config, location: DatabaseLocation, role: 'source' | 'target'): Promise<DatabaseHandle> {
  try {
    // Only checked here, not migrated: the source is never changed, the target only once it is known empty.
    return await openDatabase(configFor(config, location), undefined, { migrate: false });
  } catch (error) {
    if (error instanceof SchemaTooNewError) {
      throw new CopyRefusedError(
        `the ${role} ${describeLocation(location)} was migrated by a newer Gatehouse (${error.unknownMigrations.join(', ')}): ` +
          'copy it with that version of Gatehouse',
      );
    }
    throw error;
  }
}

/** The source must be at exactly this build's schema: its tables are copied as this build knows them. */
async function checkSourceSchema(db: Kysely<Database>, location: DatabaseLocation): Promise<void> {
  const executed = await executedMigrations(db);
  if (executed.length === 0) throw new CopyRefusedError(`the source ${describeLocation(location)} is not a Gatehouse database (it has no migrations table)`);
  const missing = KNOWN_MIGRATIONS.filter((name) => !executed.includes(name));
  if (missing.length > 0) {
    throw new CopyRefusedError(
      `the source ${describeLocation(location)} has an older schema (it lacks ${missing.join(', ')}): ` +
        'run `gatehouse migrate` on it with this version first (point database.url or database.path at it), then copy again',
    );
  }
}

/**
 * Whether a table exists where this connection's queries find it: on PostgreSQL through the
 * search_path (a `?options=-c search_path=…` in the URL puts Gatehouse's tables in another schema).
 */
async function tableExists(db: Kysely<Database>, table: string): Promise<boolean> {
  if (dialectOf(db) === 'postgres') {
    const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(db);
    return typeof rows[0]?.found === 'string';
  }
  const { rows } = await sql`select 1 from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  return rows.length > 0;
}

/** Refuses a target that holds any row in any Gatehouse table: a copy never merges into, or overwrites, an install. */
async function refuseRows(db: Kysely<Database>, location: DatabaseLocation): Promise<void> {
  const holding: string[] = [];
  for (const table of COPY_ORDER) {
    if (!(await tableExists(db, table))) continue;
    if (await sql`select 1 from ${sql.table(table)} limit 1`.execute(db).then(({ rows }) => rows.length > 0)) holding.push(table);
  }
  if (holding.length > 0) {
    throw new CopyRefusedError(
      `the target ${describeLocation(location)} already holds Gatehouse data (in ${holding.join(', ')}): ` +
        'copy-database only fills an empty database; give it a new one (nothing was changed)',
    );
  }
}

/** Tables and rows as the copy sees them: any table name of the schema, any row. */
type Rows = Kysely<Record<string, Record<string, unknown>>>;

async function copyTables(sourceDb: Kysely<Database>, targetDb: Kysely<Database>, to: DatabaseLocation, batchRows: number): Promise<CopySummary['tables']> {
  const readSnapshot = dialectOf(sourceDb) === 'postgres' ? sourceDb.transaction().setIsolationLevel('repeatable read').setAccessMode('read only') : sourceDb.transaction();
  return readSnapshot.execute((source) =>
    targetDb.transaction().execute(async (target) => {
      if (dialectOf(target) === 'postgres') {
        // A copy of a large install takes longer than a request's statement timeout is meant for. Nodes
        // already started on the target wait (EXCLUSIVE lets them read, not write) until it is done.
        await sql`set local statement_timeout = 0`.execute(target);
        await sql`lock table ${sql.join(COPY_ORDER.map((table) => sql.table(table)))} in exclusive mode`.execute(target);
      }
      // Again, now that nothing else can write: a node started on the target in between may have.
      await refuseRows(target, to);
      const copied: CopySummary['tables'] = [];
      for (const table of COPY_ORDER) copied.push({ table, rows: await copyTable(source as unknown as Rows, target as unknown as Rows, table, batchRows) });
      if (dialectOf(target) === 'postgres') await advanceSequences(target);
      return copied;
    }),
  );
}

/** Copies one table in batches read in key order (keyset paging: each batch starts after the last key). */
async function copyTable(source: Rows, target: Rows, table: TableName, batchRows: number): Promise<number> {
  const key = TABLES[table].key as readonly string[];
  let after: Record<string, unknown> | undefined;
  let rows = 0;
  for (;;) {
    let query = source.selectFrom(table).selectAll();
    for (const column of key) query = query.orderBy(column);
    if (after) {
      const last = after;
      query = query.where((eb) =>
        key.length === 1 ? eb(key[0]!, '>', last[key[0]!]) : eb(eb.refTuple(key[0]!, key[1]!), '>', eb.tuple(last[key[0]!], last[key[1]!])),
      );
    }
    const batch = await query.limit(batchRows).execute();
    if (batch.length === 0) return rows;
    try {
      await target.insertInto(table).values(batch).execute();
    } catch (error) {
      throw new Error(`copying ${table} failed after ${rows} row(s): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    rows += batch.length;
    after = batch.at(-1);
    if (batch.length < batchRows) return rows;
  }
}

/**
 * A column filled from a sequence (serial, identity) must continue after the copied values, or the
 * next insert would reuse one. Gatehouse's own tables use text ids; this covers any such column.
 */
async function advanceSequences(target: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ table: string; column: string; sequence: string }>`
    select c.relname as table, a.attname as column, pg_get_serial_sequence(quote_ident(c.relname), a.attname) as sequence
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    where c.relnamespace = to_regnamespace(current_schema()) and c.relname = any(${[...COPY_ORDER]}) and a.attnum > 0 and not a.attisdropped
      and pg_get_serial_sequence(quote_ident(c.relname), a.attname) is not null`.execute(target);
  for (const { table, column, sequence } of rows) {
    await sql`select setval(${sequence}, max(${sql.ref(column)})) from ${sql.table(table)} having max(${sql.ref(column)}) is not null`.execute(target);
  }
}
