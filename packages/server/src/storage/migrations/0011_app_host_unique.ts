import { randomUUID } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** The tables as this migration finds and leaves them (frozen here: later schemas may differ). */
interface Tables {
  apps: { id: string; definition: string; host: string | null; created_at: number; updated_at: number };
  apps_set_aside: { id: string; definition: string; host: string; kept_app_id: string; created_at: number; updated_at: number; set_aside_at: number };
  audit_events: {
    id: string;
    time: number;
    type: string;
    outcome: string;
    actor_user_id: string | null;
    target_user_id: string | null;
    session_id: string | null;
    provider_id: string | null;
    app_id: string | null;
    ip: string | null;
    user_agent: string | null;
    details: string;
  };
}

/**
 * One console app per host, kept by the database: a `host` column (the public URL's host as the proxy
 * looks it up: `new URL(publicUrl).host`, lower-case, without a default port) with a unique index, so
 * two creates of one host at the same moment (two admins, two nodes) cannot both succeed.
 *
 * A database may hold two apps with one host already (made by that race before this). The registry
 * loads the apps oldest first and keeps the first app of each host: the older one is the one that was
 * served, and the later one never was. So the migration keeps the older (created first; between two of
 * the same moment, the id first in code-point order) and sets each later one aside rather than failing
 * the upgrade, and so every app behind Gatehouse, over an app that served no request: its row is moved
 * whole to `apps_set_aside` (with the host and the app that kept it), and an `app_set_aside` event in the
 * audit log tells the admins, with its definition. Nothing is deleted.
 *
 * A definition without a readable public URL (left out by the registry already) gets no host: such a
 * row holds none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // In one transaction on SQLite too (Kysely's migrator runs PostgreSQL's in one already): an upgrade
  // stopped half-way leaves no app moved without its event, nor a column without its index.
  const tables = db as unknown as Kysely<Tables>;
  if (tables.isTransaction) await migrate(tables);
  else await tables.transaction().execute(migrate);
}

async function migrate(db: Kysely<Tables>): Promise<void> {
  await db.schema
    .createTable('apps_set_aside')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('definition', 'text', (col) => col.notNull())
    .addColumn('host', 'text', (col) => col.notNull())
    .addColumn('kept_app_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('set_aside_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.alterTable('apps').addColumn('host', 'text').execute();

  // The registry's order (created first; ids in code-point order on both databases between two of the same moment).
  // (PostgreSQL's own collation may be a language's: `collate "C"` is code-point order there, as SQLite's.)
  const byId = db.getExecutor().adapter instanceof PostgresAdapter ? sql`id collate "C"` : sql`id`;
  const rows = await db.selectFrom('apps').select(['id', 'definition', 'created_at', 'updated_at']).orderBy('created_at').orderBy(byId).execute();
  const now = Date.now();
  const holders = new Map<string, string>();
  for (const row of rows) {
    const host = hostOf(row.definition);
    if (host === undefined) continue;
    const kept = holders.get(host);
    if (kept === undefined) {
      holders.set(host, row.id);
      await db.updateTable('apps').set({ host }).where('id', '=', row.id).execute();
      continue;
    }
    await db
      .insertInto('apps_set_aside')
      .values({ id: row.id, definition: row.definition, host, kept_app_id: kept, created_at: row.created_at, updated_at: row.updated_at, set_aside_at: now })
      .execute();
    await db.deleteFrom('apps').where('id', '=', row.id).execute();
    await db
      .insertInto('audit_events')
      .values({
        id: randomUUID(),
        time: now,
        type: 'app_set_aside',
        outcome: 'success',
        actor_user_id: null,
        target_user_id: null,
        session_id: null,
        provider_id: null,
        app_id: row.id,
        ip: null,
        user_agent: null,
        details: JSON.stringify({
          reason: `${host} is the host of the console app "${kept}" as well, which was created first and is the one that was served`,
          host,
          keptApp: kept,
          keptIn: 'apps_set_aside',
          definition: parseJson(row.definition) ?? row.definition,
        }),
      })
      .execute();
  }
  await db.schema.createIndex('apps_host_unique').on('apps').column('host').unique().execute();
}

/**
 * The host column and its index go; the apps set aside stay in `apps_set_aside` (moved back, a host
 * would have two apps again), which is dropped only when it is empty.
 */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('apps_host_unique').execute();
  await db.schema.alterTable('apps').dropColumn('host').execute();
  const left = await (db as unknown as Kysely<Tables>).selectFrom('apps_set_aside').select('id').limit(1).execute();
  if (left.length === 0) await db.schema.dropTable('apps_set_aside').execute();
}

/** The host of a stored definition's public URL, as the proxy looks it up; undefined when it has none. */
function hostOf(definition: string): string | undefined {
  const publicUrl = (parseJson(definition) as { publicUrl?: unknown } | undefined)?.publicUrl;
  return typeof publicUrl === 'string' && URL.canParse(publicUrl) ? new URL(publicUrl).host : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
