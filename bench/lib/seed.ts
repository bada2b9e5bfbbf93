import { sql } from 'kysely';
import { loadConfig } from '../../packages/server/dist/config/load.js';
import { loadSecrets } from '../../packages/server/dist/secrets.js';
import { AppSessions } from '../../packages/server/dist/sessions/appSessions.js';
import { SessionStore, type SessionTimeouts } from '../../packages/server/dist/sessions/sessionStore.js';
import { createTokenCipher, type TokenCipher } from '../../packages/server/dist/sessions/tokenCipher.js';
import { openDatabase, type DatabaseHandle, type Db } from '../../packages/server/dist/storage/database.js';

/**
 * Sessions made for the measurements at scale, written by Gatehouse's own stores (the built server's
 * SessionStore and AppSessions, from packages/server/dist) on the database a node uses, read from that
 * node's own configuration file: the secret hashes, the app tokens' hashes and the encrypted ID token
 * are exactly what a sign-in writes. What the stores do not do is the sign-in itself (the IdP round
 * trip): that is measured nowhere here.
 */
export interface SeededSessions {
  /** The app-host cookie values (`gatehouse_app`), one per session. */
  tokens: string[];
  /** The sessions' public ids (what the account page's revoke names). */
  sessionIds: string[];
}

export interface Seeder {
  db: Db;
  dialect: DatabaseHandle['dialect'];
  /** Signed-in sessions of one user, each with its app-host token for one app, in one transaction per batch. */
  sessions(input: { email: string; appId: string; appOrigin: string; count: number }): Promise<SeededSessions>;
  /** Rows in the sessions table. */
  countSessions(): Promise<number>;
  /**
   * On PostgreSQL, `VACUUM (ANALYZE)` now: what autovacuum would do after this many inserts, done before
   * anything is timed rather than by autovacuum beside the timings. Nothing on SQLite, which has no
   * background work.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** An ID token's size (a real one from the development IdP is about this long): rows as wide as a sign-in's. */
const ID_TOKEN_STANDIN = 'x'.repeat(900);

export async function openSeeder(configFile: string): Promise<Seeder> {
  const { config } = loadConfig({ file: configFile });
  const database = await openDatabase(config, undefined, { migrate: false });
  const cipher = createTokenCipher(loadSecrets(config));
  const { db } = database;
  return {
    db,
    dialect: database.dialect,
    async sessions({ email, appId, appOrigin, count }) {
      const user = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
      const identity = await db.selectFrom('identities').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
      // On PostgreSQL several transactions at once (each a connection of the pool), to overlap the round
      // trips; SQLite has one connection.
      return writeSessions(db, cipher, config.session, {
        userId: user.id,
        identityId: identity.id,
        providerId: identity.provider_id,
        appId,
        appOrigin,
        count,
        lanes: database.dialect === 'postgres' ? 4 : 1,
      });
    },
    async countSessions() {
      const row = await db.selectFrom('sessions').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    settle: () => settle({ db, dialect: database.dialect }),
    close: () => database.close(),
  };
}

async function settle({ db, dialect }: Pick<Seeder, 'db' | 'dialect'>): Promise<void> {
  if (dialect !== 'postgres') return;
  // VACUUM runs outside a transaction, and longer than a request may (database.statementTimeout).
  await db.connection().execute(async (connection) => {
    await sql`set statement_timeout = 0`.execute(connection);
    await sql`vacuum (analyze)`.execute(connection);
  });
}

/**
 * `count` signed-in sessions of one person, each with its app-host token for one app, written by the
 * stores as a sign-in writes them, 2,500 to a transaction, `lanes` transactions at once.
 */
export async function writeSessions(
  db: Db,
  cipher: TokenCipher,
  settings: SessionTimeouts,
  input: { userId: string; identityId: string; providerId: string; appId: string; appOrigin: string; count: number; lanes?: number },
): Promise<SeededSessions> {
  const tokens: string[] = [];
  const sessionIds: string[] = [];
  const batch = 2_500;
  const batches = Array.from({ length: Math.ceil(input.count / batch) }, (_, index) => index * batch);
  const lane = async () => {
    for (let start = batches.shift(); start !== undefined; start = batches.shift()) {
      const first = start;
      await db.transaction().execute(async (trx) => {
        const sessions = new SessionStore(trx, cipher, settings);
        const appSessions = new AppSessions(trx);
        for (let i = first; i < Math.min(input.count, first + batch); i++) {
          const { session } = await sessions.create({
            userId: input.userId,
            identityId: input.identityId,
            providerId: input.providerId,
            idToken: ID_TOKEN_STANDIN,
            ip: '127.0.0.1',
            userAgent: 'gatehouse-bench',
          });
          tokens.push(await appSessions.create(session.id, input.appId, input.appOrigin));
          sessionIds.push(session.id);
        }
      });
    }
  };
  await Promise.all(Array.from({ length: input.lanes ?? 1 }, lane));
  return { tokens, sessionIds };
}

/**
 * Filler: `count` more sessions, each with an app-host token, of `users` other users, each user with an
 * identity of their own as a sign-in makes them, written with SQL in one statement per table
 * (PostgreSQL's generate_series, a recursive CTE on SQLite). Their ids and hashes are random strings of
 * the real ones' lengths, so they spread over the indexes as real ones do; no cookie opens them.
 *
 * On PostgreSQL the planner's statistics are then brought up to date, as autovacuum would. On SQLite
 * they are not: Gatehouse never runs ANALYZE there, so an operator's database has no statistics, and
 * SQLite's planner then takes the primary keys' indexes for every join of the session read. (A filler
 * whose million sessions shared one identity, analyzed, made SQLite scan the identities and users tables
 * in that read instead: 60 µs more per lookup from the plan alone, measured with bench/large-tables.ts,
 * which was most of what "+1,000,000 rows" once seemed to cost.) `analyze: true` asks for them anyway.
 */
export async function fillSessions(seeder: Pick<Seeder, 'db' | 'dialect'>, input: { count: number; users: number; appId: string; appOrigin: string; analyze?: boolean }): Promise<void> {
  const { db, dialect } = seeder;
  // Whole numbers as literals: a bound JavaScript number may arrive as a real (`'filler-' || 3.0`).
  const now = sql.lit(Date.now());
  const later = sql.lit(Date.now() + 7 * 86_400_000);
  const users = sql.lit(input.users);
  const count = sql.lit(input.count);
  if (dialect === 'postgres') {
    const random = (length: number) => sql.raw(`substr(md5(random()::text) || md5(random()::text), 1, ${length})`);
    await db.transaction().execute(async (trx) => {
      // A million rows in one statement take longer than a request may (database.statementTimeout).
      await sql`set local statement_timeout = 0`.execute(trx);
      await sql`insert into users (id, email, name, status, roles, created_at, updated_at)
        select 'filler-' || n, 'filler-' || n || '@example.com', 'Filler ' || n, 'active', '[]', ${now}, ${now}
        from generate_series(1, ${users}) as n`.execute(trx);
      await sql`insert into identities (id, user_id, provider_id, subject, email, email_verified, claims, linked_at, last_used_at)
        select 'filler-' || n, 'filler-' || n, 'dev', 'filler-' || n, 'filler-' || n || '@example.com', 1, '{}', ${now}, ${now}
        from generate_series(1, ${users}) as n`.execute(trx);
      await sql`insert into sessions (id, secret_hash, user_id, identity_id, provider_id, created_at, last_seen_at, idle_expires_at, absolute_expires_at, claims_checked_at, ip, user_agent)
        select ${random(22)}, ${random(43)}, 'filler-' || (n % ${users} + 1), 'filler-' || (n % ${users} + 1), 'dev', ${now}, ${now}, ${later}, ${later}, ${now}, '127.0.0.1', 'gatehouse-bench'
        from generate_series(1, ${count}) as n`.execute(trx);
      await sql`insert into app_sessions (token_hash, session_id, app_id, app_origin, created_at)
        select ${random(43)}, id, ${input.appId}, ${input.appOrigin}, ${now} from sessions where user_id like 'filler-%'`.execute(trx);
    });
    // Analyzed, as autovacuum would after the inserts, and vacuumed now rather than while measured.
    await settle(seeder);
  } else {
    const random = (length: number) => sql.raw(`substr(lower(hex(randomblob(32))), 1, ${length})`);
    // Room for the indexes in this connection's page cache while they grow (random keys touch every
    // page), and no waiting for the disk: a copy that a crash would lose is made again by the next run.
    await sql`pragma cache_size = -1000000`.execute(db);
    await sql`pragma synchronous = off`.execute(db);
    await db.transaction().execute(async (trx) => {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${users})
        insert into users (id, email, name, status, roles, created_at, updated_at)
        select 'filler-' || i, 'filler-' || i || '@example.com', 'Filler ' || i, 'active', '[]', ${now}, ${now} from n`.execute(trx);
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${users})
        insert into identities (id, user_id, provider_id, subject, email, email_verified, claims, linked_at, last_used_at)
        select 'filler-' || i, 'filler-' || i, 'dev', 'filler-' || i, 'filler-' || i || '@example.com', 1, '{}', ${now}, ${now} from n`.execute(trx);
      // In slices, each its own statement: better-sqlite3 runs a statement synchronously, and this process
      // has other work meanwhile (HTTP requests with time limits).
      const slice = 50_000;
      for (let from = 1; from <= input.count; from += slice) {
        const first = sql.lit(from);
        const last = sql.lit(Math.min(input.count, from + slice - 1));
        await sql`with recursive n(i) as (select ${first} union all select i + 1 from n where i < ${last})
          insert into sessions (id, secret_hash, user_id, identity_id, provider_id, created_at, last_seen_at, idle_expires_at, absolute_expires_at, claims_checked_at, ip, user_agent)
          select ${random(22)}, ${random(43)}, 'filler-' || (i % ${users} + 1), 'filler-' || (i % ${users} + 1), 'dev', ${now}, ${now}, ${later}, ${later}, ${now}, '127.0.0.1', 'gatehouse-bench' from n`.execute(trx);
        await sql`insert into app_sessions (token_hash, session_id, app_id, app_origin, created_at)
          select ${random(43)}, id, ${input.appId}, ${input.appOrigin}, ${now} from sessions
          where rowid > (select coalesce(max(rowid), 0) from sessions) - ${sql.lit(Math.min(input.count, from + slice - 1) - from + 1)}`.execute(trx);
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    if (input.analyze) await sql`analyze`.execute(db);
  }
}
