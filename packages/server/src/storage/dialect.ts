import { PostgresAdapter, sql, type Kysely } from 'kysely';
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
