import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/**
 * The fixed queries (storage/fixedQuery.ts: a check of a session on every cache miss, the OpenID
 * Provider's token steps) run as named prepared statements on PostgreSQL: parsed and planned once per
 * connection, then only bound and executed. Planning a join
 * of four tables costs PostgreSQL more than running it against the indexes. Only the texts registered
 * here are prepared (a few fixed ones): every prepared statement stays on its connection for the
 * connection's life, so texts that vary (lists of values) must not be.
 */
const names = new Map<string, string>();

/** Runs this query text as a named prepared statement on PostgreSQL from now on (SQLite prepares every text: storage/statementCache.ts). */
export function prepareOnPostgres(sql: string): void {
  if (!names.has(sql)) names.set(sql, `gatehouse_${names.size + 1}`);
}

/** Kysely's pool, whose connections run the registered texts as named prepared statements. */
export function withPreparedStatements(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => preparing(await pool.connect()),
    end: () => pool.end(),
  };
}

function preparing(client: pg.PoolClient): PostgresPoolClient {
  return {
    query: ((first: unknown, parameters?: ReadonlyArray<unknown>) => {
      const name = typeof first === 'string' ? names.get(first) : undefined;
      if (name !== undefined) return client.query({ name, text: first as string, values: parameters as unknown[] });
      return (client.query as (...args: unknown[]) => unknown)(first, parameters);
    }) as PostgresPoolClient['query'],
    release: () => client.release(),
  };
}
