/**
 * What a larger sessions table costs the session read alone, with no HTTP, no cache and no node around
 * it: the floor under the at-scale measurement "+1,000,000 rows / without" (bench/README.md, "At scale").
 *
 *   npm run build && node --import tsx bench/large-tables.ts
 *
 * Two SQLite databases as the nodes at scale have them: one with BENCH_LARGE_SESSIONS (100,000) sessions
 * written by Gatehouse's own stores (SessionStore, AppSessions: the hashes and the encrypted ID token a
 * sign-in writes), and a copy of it with BENCH_LARGE_FILLER (1,000,000) more (bench/lib/seed.ts's filler).
 * Each is then opened as Gatehouse opens it (openDatabase: its page cache, its file map, its statement
 * cache) and every one of the first database's sessions is found by its app-host token, in rotation, as
 * a forward-auth check that misses the session cache finds it (`SessionStore.findWithPerson`, one
 * statement). CPU per lookup is this process's, which is SQLite's too (it runs in process). The variants
 * change one SQLite setting of the large database's connection, to show what each buys and what it costs
 * in memory; the last runs on a copy of the large database with the planner's statistics (ANALYZE). Rounds alternate the variants, so that the machine's drift touches them alike.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { parseConfig } from '../packages/server/dist/config/load.js';
import { SessionStore } from '../packages/server/dist/sessions/sessionStore.js';
import { hashSecret } from '../packages/server/dist/sessions/sessionToken.js';
import { createTokenCipher } from '../packages/server/dist/sessions/tokenCipher.js';
import { openDatabase, SQLITE_CACHE_KIB, SQLITE_MMAP_BYTES, type DatabaseHandle } from '../packages/server/dist/storage/database.js';
import { fillSessions, writeSessions } from './lib/seed.js';

const SESSIONS = Number(process.env.BENCH_LARGE_SESSIONS ?? 100_000);
const FILLER = Number(process.env.BENCH_LARGE_FILLER ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_LARGE_ROUNDS ?? 3);
const APP = { id: 'wiki', origin: 'http://wiki.localhost:4180' };

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-large-tables-'));
const configOf = (name: string) => parseConfig({ publicUrl: 'http://localhost:4180', dataDir: dir, database: { path: path.join(dir, `${name}.db`) } }, { env: {} });
const cipher = createTokenCipher({ encryptionKeys: new Map([['bench', Buffer.alloc(32, 7)]]), currentKeyId: 'bench' });

interface Variant {
  name: string;
  database: 'small' | 'large' | 'analyzed';
  /** SQL run on the connection after Gatehouse's own settings. */
  settings: string[];
  memory: string;
}

const VARIANTS: Variant[] = [
  { name: `${thousands(SESSIONS)} sessions, Gatehouse's settings`, database: 'small', settings: [], memory: `${SQLITE_CACHE_KIB / 1024} MiB cache, ${SQLITE_MMAP_BYTES / 2 ** 20} MiB map` },
  { name: `+${thousands(FILLER)}, Gatehouse's settings`, database: 'large', settings: [], memory: `${SQLITE_CACHE_KIB / 1024} MiB cache, ${SQLITE_MMAP_BYTES / 2 ** 20} MiB map` },
  { name: `+${thousands(FILLER)}, no file map`, database: 'large', settings: ['pragma mmap_size = 0'], memory: `${SQLITE_CACHE_KIB / 1024} MiB cache` },
  { name: `+${thousands(FILLER)}, 1 GiB file map`, database: 'large', settings: [`pragma mmap_size = ${2 ** 30}`], memory: `${SQLITE_CACHE_KIB / 1024} MiB cache, 1 GiB map` },
  { name: `+${thousands(FILLER)}, 256 MiB page cache`, database: 'large', settings: ['pragma cache_size = -262144'], memory: `256 MiB cache, ${SQLITE_MMAP_BYTES / 2 ** 20} MiB map` },
  { name: `+${thousands(FILLER)}, ANALYZE run before`, database: 'analyzed', settings: [], memory: `${SQLITE_CACHE_KIB / 1024} MiB cache, ${SQLITE_MMAP_BYTES / 2 ** 20} MiB map` },
];

async function main(): Promise<void> {
  const say = (line = '') => process.stdout.write(`${line}\n`);
  say(`Large tables, the session read alone: node ${process.version}, ${ROUNDS} rounds`);
  const seedStarted = performance.now();
  const small = await openDatabase(configOf('small'));
  const tokens = await seed(small);
  await small.close();
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(path.join(dir, `small.db${suffix}`))) copyFileSync(path.join(dir, `small.db${suffix}`), path.join(dir, `large.db${suffix}`));
  const large = await openDatabase(configOf('large'));
  await fillSessions(large, { count: FILLER, users: Math.max(1, Math.round(FILLER / 100)), appId: APP.id, appOrigin: APP.origin });
  await large.close();
  // The same database once more, with the planner's statistics (Gatehouse never runs ANALYZE on SQLite; an operator might).
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(path.join(dir, `large.db${suffix}`))) copyFileSync(path.join(dir, `large.db${suffix}`), path.join(dir, `analyzed.db${suffix}`));
  const analyzed = await openDatabase(configOf('analyzed'), undefined, { migrate: false });
  await sql`analyze`.execute(analyzed.db);
  await analyzed.close();
  say(`seeded ${thousands(SESSIONS)} sessions with the stores and ${thousands(FILLER)} filler sessions in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`);

  const results = new Map<string, number[]>(VARIANTS.map((variant) => [variant.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of round % 2 ? VARIANTS : [...VARIANTS].reverse()) {
      const perLookup = await measure(variant, tokens);
      results.get(variant.name)!.push(perLookup);
      say(`round ${round}/${ROUNDS}  ${variant.name.padEnd(40)} ${perLookup.toFixed(1).padStart(6)} µs CPU per lookup`);
    }
  }
  const base = median(results.get(VARIANTS[0]!.name)!);
  say();
  say('variant                                   µs CPU per lookup (median, min–max)   / the small table   SQLite memory');
  for (const variant of VARIANTS) {
    const values = results.get(variant.name)!;
    say(`${variant.name.padEnd(41)} ${`${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`.padEnd(37)} ${(median(values) / base).toFixed(2).padStart(16)}   ${variant.memory}`);
  }
}

/** Sessions of one user, each with its app-host token, written by the stores as a sign-in writes them. */
async function seed(handle: DatabaseHandle): Promise<string[]> {
  const { db } = handle;
  const now = Date.now();
  await db.insertInto('users').values({ id: 'u1', email: 'alice@example.com', name: 'Alice', picture: null, status: 'active', roles: '[]', primary_identity_id: 'i1', created_at: now, updated_at: now, last_sign_in_at: now }).execute();
  await db.insertInto('identities').values({ id: 'i1', user_id: 'u1', provider_id: 'dev', subject: 'alice', email: 'alice@example.com', email_verified: 1, claims: '{"groups":["staff"]}', linked_at: now, last_used_at: now }).execute();
  const { tokens } = await writeSessions(db, cipher, configOf('small').session, { userId: 'u1', identityId: 'i1', providerId: 'dev', appId: APP.id, appOrigin: APP.origin, count: SESSIONS });
  return tokens;
}

/** One pass over every token to warm the connection (as the node is warm when measured), then one timed. */
async function measure(variant: Variant, tokens: readonly string[]): Promise<number> {
  const config = configOf(variant.database);
  const handle = await openDatabase(config, undefined, { migrate: false });
  try {
    for (const statement of variant.settings) await sql.raw(statement).execute(handle.db);
    const store = new SessionStore(handle.db, cipher, config.session);
    const pass = async () => {
      for (const token of tokens) {
        const found = await store.findWithPerson({ appTokenHash: hashSecret(token), appOrigin: APP.origin });
        if (!found) throw new Error(`${variant.name}: a seeded session was not found`);
      }
    };
    await pass();
    const before = process.cpuUsage();
    await pass();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / tokens.length;
  } finally {
    await handle.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function thousands(value: number): string {
  return value.toLocaleString('en-US');
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
