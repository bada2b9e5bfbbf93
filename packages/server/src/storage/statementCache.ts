import type { Database as SQLiteDatabase, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * Kysely's SQLite driver prepares every query anew (`db.prepare(sql)` per execution). Preparing costs
 * SQLite a parse and a plan: about 12 µs for a primary-key select here, where running the prepared
 * statement costs under 2 µs. Gatehouse's queries are a few hundred fixed texts (Kysely compiles the
 * same builder to the same SQL, values travel as parameters), so each text is prepared once and kept.
 *
 * - Bounded: at most `max` texts, the least recently used dropped first (a text with a list of values,
 *   `in (?, ?, …)`, differs by its length; nothing else varies).
 * - A statement still being iterated (Kysely's `stream()`, the audit export) is busy and cannot run
 *   again until the iteration ends: such a query is prepared afresh, as the driver would.
 * - A schema change makes SQLite re-prepare a kept statement by itself at its next run (sqlite3_prepare_v3).
 */
export function withStatementCache(sqlite: SQLiteDatabase, max = 500): SqliteDatabase {
  const kept = new Map<string, Statement>();
  return {
    close: () => {
      kept.clear();
      sqlite.close();
    },
    prepare(sql: string) {
      const found = kept.get(sql);
      if (found && !found.busy) {
        // Most recently used last: a Map keeps insertion order, so the first key is the one to drop.
        kept.delete(sql);
        kept.set(sql, found);
        return found;
      }
      const statement = sqlite.prepare(sql);
      if (found) return statement;
      if (kept.size >= max) kept.delete(kept.keys().next().value!);
      kept.set(sql, statement);
      return statement;
    },
  };
}
