import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/storage/statementCache.js';

interface Tables {
  items: { id: number; name: string };
}

/** A real SQLite database whose prepare calls are counted. */
function counted(): { sqlite: SQLite.Database; prepared: string[] } {
  const sqlite = new SQLite(':memory:');
  const prepared: string[] = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((text: string) => {
    prepared.push(text);
    return prepare(text);
  }) as typeof sqlite.prepare;
  sqlite.exec('create table items (id integer primary key, name text not null)');
  return { sqlite, prepared };
}

const open: Array<Kysely<Tables>> = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy();
});

function kysely(sqlite: SQLite.Database, max?: number): Kysely<Tables> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, max) }) });
  open.push(db);
  return db;
}

describe('the SQLite statement cache', () => {
  it('prepares each query text once and runs it with each call’s values', async () => {
    const { sqlite, prepared } = counted();
    const db = kysely(sqlite);
    for (let id = 1; id <= 5; id++) await db.insertInto('items').values({ id, name: `item ${id}` }).execute();
    const names: string[] = [];
    for (let id = 1; id <= 5; id++) names.push((await db.selectFrom('items').select('name').where('id', '=', id).executeTakeFirstOrThrow()).name);
    expect(names).toEqual(['item 1', 'item 2', 'item 3', 'item 4', 'item 5']);
    expect(prepared.filter((text) => text.startsWith('insert'))).toHaveLength(1);
    expect(prepared.filter((text) => text.startsWith('select'))).toHaveLength(1);
  });

  it('keeps at most its bound, dropping the least recently used text', async () => {
    const { sqlite, prepared } = counted();
    const db = kysely(sqlite, 2);
    const byId = () => db.selectFrom('items').selectAll().where('id', '=', 1).execute();
    const byName = () => db.selectFrom('items').selectAll().where('name', '=', 'x').execute();
    const all = () => db.selectFrom('items').selectAll().execute();
    await byId();
    await byName();
    await byId(); // byName is now the least recently used
    await all(); // drops byName
    await byId();
    await byName();
    expect(prepared.filter((text) => text.includes('"name" = ?'))).toHaveLength(2);
    expect(prepared.filter((text) => text.includes('"id" = ?'))).toHaveLength(1);
  });

  it('gives a statement of its own to a text whose kept statement is still being iterated', () => {
    const { sqlite } = counted();
    sqlite.exec("insert into items (id, name) values (1, 'one'), (2, 'two'), (3, 'three')");
    const cached = withStatementCache(sqlite);
    const text = 'select id from items order by id';
    // A statement being iterated (Kysely's stream()) is busy: running it again would throw.
    const streaming = cached.prepare(text).iterate([]);
    const seen: unknown[] = [];
    for (const row of streaming) seen.push(row, cached.prepare(text).all([]).length);
    expect(seen).toEqual([{ id: 1 }, 3, { id: 2 }, 3, { id: 3 }, 3]);
    cached.close();
  });

  it('sees a column added after the statement was kept', async () => {
    const { sqlite } = counted();
    const db = kysely(sqlite);
    await db.insertInto('items').values({ id: 1, name: 'one' }).execute();
    const row = () => db.selectFrom('items').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    expect(await row()).toEqual({ id: 1, name: 'one' });
    await sql`alter table items add column colour text not null default 'blue'`.execute(db);
    expect(await row()).toEqual({ id: 1, name: 'one', colour: 'blue' });
  });
});
