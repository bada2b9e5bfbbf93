import { CompiledQuery, type Compilable } from 'kysely';
import { prepareOnPostgres } from './preparedStatements.js';

/**
 * A query whose text never changes, built and compiled by Kysely once and then only given new values.
 *
 * Kysely builds a query anew at every call (immutable nodes, frozen at each step, then a compiler's walk
 * over them): tens of µs for an insert with an upsert, more than SQLite takes to run it. The statements
 * on a hot path (the OpenID Provider's adapter, run several times per token request) have fixed texts;
 * only their values change, and Kysely always passes values as parameters. So the query is built once
 * with a named stand-in for each value, compiled, and the stand-ins' positions among the parameters are
 * remembered; each run puts the values into those positions. On PostgreSQL the text is also a named
 * prepared statement (storage/preparedStatements.ts), parsed and planned once per connection.
 *
 * The builder must not branch on the values (it never sees them): what varies in the SQL's shape (a
 * list's length, an optional condition) needs a query of its own per shape. Every named value must
 * reach the parameters, or the first run throws. The builder's argument is annotated with the values'
 * types: `fixedQuery((value: Value<{ id: string }>) => db.selectFrom('t').selectAll().where('id', '=', value('id')))`.
 */
export function fixedQuery<Values extends object, Row>(build: (value: Value<Values>) => Compilable<Row>): (values: Values) => CompiledQuery<Row> {
  let compiled: { sql: string; fixed: readonly unknown[]; slots: ReadonlyArray<readonly [index: number, name: string]> } | undefined;
  return (values) => {
    compiled ??= compile(build, Object.keys(values));
    const parameters = compiled.fixed.slice();
    for (const [index, name] of compiled.slots) parameters[index] = values[name as keyof Values];
    return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>;
  };
}

/** The stand-in for a named value, as the builder of a fixed query is given it (annotate it to name the values' types). */
export type Value<Values> = <K extends keyof Values & string>(name: K) => Values[K];

/** Marks a stand-in; a value of its own shape cannot come from outside, since the builder sees only these. */
const STAND_IN = '\u0000gatehouse-fixed-query:';

function compile<Values extends object, Row>(build: (value: Value<Values>) => Compilable<Row>, names: readonly string[]) {
  const { sql, parameters } = build((name) => `${STAND_IN}${name}` as Values[typeof name]).compile();
  const slots: Array<readonly [number, string]> = [];
  parameters.forEach((parameter, index) => {
    if (typeof parameter === 'string' && parameter.startsWith(STAND_IN)) slots.push([index, parameter.slice(STAND_IN.length)]);
  });
  const named = new Set(slots.map(([, name]) => name));
  const missing = names.filter((name) => !named.has(name));
  if (missing.length > 0) throw new Error(`fixedQuery: ${missing.join(', ')} never reached the query's parameters`);
  const unknown = [...named].filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new Error(`fixedQuery: ${unknown.join(', ')} was not given a value`);
  prepareOnPostgres(sql);
  return { sql, fixed: parameters.map((parameter, index) => (slots.some(([slot]) => slot === index) ? undefined : parameter)), slots };
}
