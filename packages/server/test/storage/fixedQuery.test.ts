import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { fixedQuery, type Value } from '../../src/storage/fixedQuery.js';

interface Tables {
  items: { id: number; name: string; note: string | null; seen_at: number | null };
}

const open: Array<Kysely<Tables>> = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy();
});

function database(): Kysely<Tables> {
  const sqlite = new SQLite(':memory:');
  sqlite.exec('create table items (id integer primary key, name text not null, note text, seen_at integer)');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: sqlite }) });
  open.push(db);
  return db;
}

describe('a fixed query', () => {
  it('is built once and runs with each call’s values in their places, fixed values kept', async () => {
    const db = database();
    let builds = 0;
    const insert = fixedQuery((value: Value<{ id: number; name: string; note: string | null }>) => {
      builds++;
      return db.insertInto('items').values({ id: value('id'), name: value('name'), note: value('note'), seen_at: null });
    });
    // A value named twice goes to both places; a fixed value (the name compared with) stays as built.
    const touch = fixedQuery((value: Value<{ id: number; now: number }>) =>
      db.updateTable('items').set({ seen_at: value('now') }).where('id', '=', value('id')).where('name', '!=', 'frozen').where('seen_at', 'is', null).where('id', '<', value('now')),
    );
    const byId = fixedQuery((value: Value<{ id: number }>) => db.selectFrom('items').select(['name', 'note', 'seen_at']).where('id', '=', value('id')));

    await db.executeQuery(insert({ id: 1, name: 'one', note: null }));
    await db.executeQuery(insert({ id: 2, name: 'frozen', note: 'kept' }));
    expect(builds).toBe(1);
    expect(insert({ id: 3, name: 'three', note: 'x' }).sql).toBe(insert({ id: 4, name: 'four', note: null }).sql);

    expect(Number((await db.executeQuery(touch({ id: 1, now: 50 }))).numAffectedRows)).toBe(1);
    expect(Number((await db.executeQuery(touch({ id: 1, now: 60 }))).numAffectedRows)).toBe(0);
    expect(Number((await db.executeQuery(touch({ id: 2, now: 70 }))).numAffectedRows)).toBe(0);
    expect((await db.executeQuery(byId({ id: 1 }))).rows).toEqual([{ name: 'one', note: null, seen_at: 50 }]);
    expect((await db.executeQuery(byId({ id: 2 }))).rows).toEqual([{ name: 'frozen', note: 'kept', seen_at: null }]);
    expect((await db.executeQuery(byId({ id: 9 }))).rows).toEqual([]);
  });

  it('a value the query never uses is refused at its first run, not silently dropped', () => {
    const db = database();
    const query = fixedQuery((value: Value<{ id: number; name: string }>) => db.selectFrom('items').selectAll().where('id', '=', value('id')));
    expect(() => query({ id: 1, name: 'ignored' })).toThrow(/name never reached/);
  });

  it('a value the query uses but the call does not give is refused', () => {
    const db = database();
    const query = fixedQuery((value: Value<{ id: number; name: string }>) => db.selectFrom('items').selectAll().where('id', '=', value('id')).where('name', '=', value('name')));
    expect(() => query({ id: 1 } as { id: number; name: string })).toThrow(/name was not given/);
  });
});
