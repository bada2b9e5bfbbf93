import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

/** Which database a Kysely instance (or a transaction of one) talks to. */
export function dialectOf(db: Pick<Kysely<unknown>, 'getExecutor'>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Serialises the transactions that name the same key until they end, across every node: on PostgreSQL
 * a transaction-scoped advisory lock per key (taken in sorted order, so two transactions naming the
 * same keys never wait for each other in a circle). On SQLite it does nothing: a SQLite database is one
 * node's, and its one connection runs one transaction at a time already.
 *
 * Call it once, first thing in the transaction, with every key the transaction needs.
 */
export async function serializeOn(trx: Kysely<Database>, keys: readonly string[]): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  for (const key of [...new Set(keys)].sort()) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`gatehouse/${key}`}, 0))`.execute(trx);
  }
}

/**
 * A text column to sort by in code-point order on both databases. SQLite compares text byte by byte
 * (BINARY) whatever the host; PostgreSQL uses the database's collation, which on a server created
 * with a language's locale (en_US.UTF-8, an ICU locale) orders punctuation, digits and letters
 * otherwise — and differently from one server to the next. `COLLATE "C"` is byte order there, which
 * for UTF-8 is code-point order: the same list, page by page, on either database.
 */
export function inCodePointOrder(db: Pick<Kysely<unknown>, 'getExecutor'>, column: string): RawBuilder<string> {
  return dialectOf(db) === 'postgres' ? sql<string>`${sql.ref(column)} collate "C"` : sql<string>`${sql.ref(column)}`;
}

/**
 * A text column lower-cased in ASCII only (A-Z to a-z, every other character as it is), the same on both
 * databases. SQLite's lower() folds ASCII only; PostgreSQL's follows the database's locale (all of
 * Unicode under en_US.UTF-8 or an ICU locale, ASCII only under C), so a search for "élodie" found
 * "Élodie" on one server and not on another. Under `COLLATE "C"` PostgreSQL folds ASCII only too, on
 * every server. Fold the searched-for text with `foldAscii`, its twin.
 */
export function asciiLowered(db: Pick<Kysely<unknown>, 'getExecutor'>, column: string): RawBuilder<string> {
  return dialectOf(db) === 'postgres' ? sql<string>`lower(${sql.ref(column)} collate "C")` : sql<string>`lower(${sql.ref(column)})`;
}

/** Text lower-cased in ASCII only, as `asciiLowered` lower-cases a column. */
export function foldAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * Whether the database refused a row because a unique index (or a primary key) has its value already:
 * PostgreSQL's SQLSTATE 23505, SQLite's UNIQUE and PRIMARY KEY constraints. A store answers it as the
 * conflict it is (the race its own check could not see), never as a 500.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
