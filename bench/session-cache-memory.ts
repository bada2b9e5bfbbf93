/**
 * What one entry of the session cache costs in memory, measured on the heap, beside what the cache
 * charges it against session.cache.maxMemory (its estimate): docs/operations/sizing.md quotes the
 * figures, and sessions/sessionCache.ts's ENTRY_OVERHEAD comes from here.
 *
 *   npm run build && node --import tsx bench/session-cache-memory.ts
 *
 * Each profile runs in a process of its own, started with --expose-gc, on SQLite and on PostgreSQL
 * (when installed): the built server's own services (createServices on a fresh database, as `start`
 * builds them), sessions written by its own SessionStore (the tokens encrypted as a sign-in encrypts
 * them) with app-host tokens, then every token resolved once through the real SessionResolver, which
 * loads and caches each session as a first request does; each value it answers with is kept in a
 * SessionCache of the server's class and settings. The heap is read after a full GC with that cache
 * filled, and again once it is emptied: the difference, per entry, is what the cache holds. RSS is read
 * before and after the filling. Token and claim sizes are those of real IdPs' answers (PROFILES); only
 * their contents are made up (encrypted, the contents do not change a size).
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { parseConfig } from '../packages/server/dist/config/load.js';
import { createServices } from '../packages/server/dist/services.js';
import { AppSessions } from '../packages/server/dist/sessions/appSessions.js';
import { estimateBytes, SessionCache } from '../packages/server/dist/sessions/sessionCache.js';
import type { CurrentSession } from '../packages/server/dist/sessions/sessionResolver.js';
import { SessionStore } from '../packages/server/dist/sessions/sessionStore.js';
import { createTokenCipher } from '../packages/server/dist/sessions/tokenCipher.js';
import { postgresBinDir, startPostgres } from '../packages/server/test/support/postgres.js';

const execFileAsync = promisify(execFile);

/** Cached entries per profile (each a session with one app-host token, resolved once). */
const ENTRIES = Number(process.env.BENCH_CACHE_ENTRIES ?? 100_000);
/** Resolved and dropped before the first reading, so compiled code and prepared statements are not counted. */
const WARM_UP = 2_000;

interface Profile {
  /** Why these sizes. */
  about: string;
  idToken: number;
  refreshToken: number;
  /** An access token kept for an app with passAccessToken (0: none). */
  accessToken: number;
  groups: number;
  /** A group's length: names ("engineering-platform") or object ids (Entra's UUIDs, 36). */
  groupLength: number;
  picture: boolean;
  /** Scalar claims kept for claim = value rules (identityProfile.ts `extraClaims`). */
  extraClaims: number;
  userAgent: string;
}

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const PROFILES: Record<string, Profile> = {
  small: {
    about: 'an IdP of short tokens (Okta, the development IdP): opaque refresh token, two groups, no picture',
    idToken: 900,
    refreshToken: 43,
    accessToken: 0,
    groups: 2,
    groupLength: 8,
    picture: false,
    extraClaims: 3,
    userAgent: CHROME,
  },
  typical: {
    about: 'Keycloak or Google Workspace: a JWT refresh token, ten groups, a picture URL, eight profile claims',
    idToken: 1_300,
    refreshToken: 800,
    accessToken: 0,
    groups: 10,
    groupLength: 20,
    picture: true,
    extraClaims: 8,
    userAgent: CHROME,
  },
  large: {
    about: 'Entra ID with passAccessToken: long tokens, 100 group object ids, ten claims',
    idToken: 1_900,
    refreshToken: 1_600,
    accessToken: 2_400,
    groups: 100,
    groupLength: 36,
    picture: false,
    extraClaims: 10,
    userAgent: CHROME,
  },
};

/** Text of `length` base64url characters (a token's alphabet). */
function text(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length);
}

function claimsOf(profile: Profile, index: number): string {
  const groups = Array.from({ length: profile.groups }, (_, g) => (profile.groupLength === 36 ? randomUUID() : `${text(profile.groupLength - 3)}-${g}`.slice(0, profile.groupLength)));
  const extra: Record<string, string | boolean> = {};
  const names = ['name', 'given_name', 'family_name', 'locale', 'preferred_username', 'hd', 'tid', 'oid', 'department', 'employee_id', 'zoneinfo', 'website'];
  for (const name of names.slice(0, profile.extraClaims)) extra[name] = name === 'tid' || name === 'oid' ? randomUUID() : `${name}-${index}-${text(8)}`;
  return JSON.stringify({
    name: `Person ${index} ${text(6)}`,
    ...(profile.picture ? { picture: `https://lh3.googleusercontent.com/a/${text(60)}=s96-c` } : {}),
    groups,
    extra,
    facts: profile.groupLength === 36 ? { tenant: String(extra.tid ?? randomUUID()) } : { hostedDomain: 'example.com' },
  });
}

interface Reading {
  profile: string;
  database: 'sqlite' | 'postgres';
  entries: number;
  /** Heap bytes per entry: filled minus emptied, after full GCs. */
  heapPerEntry: number;
  /** What the cache charged per entry (its estimate). */
  estimatedPerEntry: number;
  /** RSS growth per entry from before the filling to after it. */
  rssPerEntry: number;
  /** The cache's whole estimate and the heap's whole difference, in MiB. */
  estimatedMiB: number;
  heapMiB: number;
  /** The estimate's CPU cost, per stored entry. */
  estimateMicros: number;
  /** The process's RSS and heap before the filling (the server, empty cache), MiB. */
  baseRssMiB: number;
  baseHeapMiB: number;
  fillSeconds: number;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  // Twice: weak references and finalizers cleared by the first are collected by the second.
  collect();
  collect();
}

async function child(name: string, databaseUrl: string | undefined): Promise<void> {
  const profile = PROFILES[name]!;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-cache-memory-'));
  const log = pino({ enabled: false });
  try {
    const config = parseConfig(
      {
        publicUrl: 'http://localhost:4180',
        dataDir,
        providers: [{ id: 'corp', name: 'Corp', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' }],
        ...(databaseUrl ? { database: { url: databaseUrl } } : {}),
      },
      { env: {} },
    );
    const services = await createServices(config, log);
    const { db } = services.database;
    const cipher = createTokenCipher(services.secrets);
    const appOrigin = 'https://wiki.example.com';
    const total = ENTRIES + WARM_UP;
    const users = Math.ceil(total / 2);
    const now = Date.now();
    const tokens: string[] = [];
    const sessionIds: string[] = [];
    for (let from = 0; from < users; from += 1_000) {
      await db.transaction().execute(async (trx) => {
        for (let i = from; i < Math.min(users, from + 1_000); i++) {
          const id = randomUUID();
          const identityId = randomUUID();
          const email = `person.${i}@example.com`;
          await trx
            .insertInto('users')
            .values({ id, email, name: `Person ${i}`, picture: profile.picture ? `https://lh3.googleusercontent.com/a/${text(60)}=s96-c` : null, status: 'active', roles: '[]', primary_identity_id: identityId, created_at: now, updated_at: now, last_sign_in_at: now })
            .execute();
          await trx
            .insertInto('identities')
            .values({ id: identityId, user_id: id, provider_id: 'corp', subject: randomUUID(), email, email_verified: 1, claims: claimsOf(profile, i), linked_at: now, last_used_at: now })
            .execute();
          const sessions = new SessionStore(trx, cipher, config.session);
          const appSessions = new AppSessions(trx);
          // Two sessions per user (a laptop and a phone).
          for (let s = 0; s < 2 && tokens.length < total; s++) {
            const { session } = await sessions.create({
              userId: id,
              identityId,
              providerId: 'corp',
              idpSid: randomUUID(),
              idToken: text(profile.idToken),
              refreshToken: text(profile.refreshToken),
              accessToken: profile.accessToken ? { value: text(profile.accessToken), expiresAt: now + 3_600_000 } : undefined,
              ip: `203.0.113.${i % 250}`,
              userAgent: profile.userAgent,
            });
            tokens.push(await appSessions.create(session.id, 'wiki', appOrigin));
            sessionIds.push(session.id);
          }
        }
      });
    }
    const request = { log, ip: '203.0.113.7', headers: { 'user-agent': profile.userAgent } };
    // The entries are held by a SessionCache of the server's own class and settings but a ttl longer than
    // the filling takes (on PostgreSQL here, longer than the server's 60 s): each value is the one the
    // real resolver loaded and cached, and the resolver's own entries are dropped before each reading.
    const held = new SessionCache<CurrentSession & { sessionId: string }>({ maxBytes: 2 ** 40, ttlMs: 86_400_000 });
    const fill = async (from: number, to: number) => {
      let next = from;
      // Several requests at once, as a node serves them (on PostgreSQL, over its pool's connections).
      const lane = async () => {
        for (let i = next++; i < to; i = next++) {
          const value = (await services.resolver.app(tokens[i], appOrigin, request)) as (CurrentSession & { sessionId?: unknown }) | undefined;
          if (!value) throw new Error(`session ${i} did not resolve`);
          // The resolver answers with the very object it cached (its sessionId beside the session).
          if (value.sessionId !== value.session.id) throw new Error('the resolver did not answer with its cached value');
          held.set(tokens[i]!, appOrigin, value as CurrentSession & { sessionId: string }, held.generation);
        }
      };
      await Promise.all(Array.from({ length: 16 }, lane));
      for (const id of sessionIds.slice(from, to)) services.resolver.invalidate(id);
      if (services.resolver.cacheStats().entries !== 0) throw new Error('the resolver still holds entries');
    };
    // Warm up on sessions of their own, then drop them.
    await fill(ENTRIES, total);
    held.clear();

    gc();
    const before = process.memoryUsage();
    const filling = Date.now();
    await fill(0, ENTRIES);
    const fillSeconds = (Date.now() - filling) / 1000;
    gc();
    const filled = process.memoryUsage();
    const stats = held.stats;
    if (stats.entries !== ENTRIES) throw new Error(`the cache holds ${stats.entries} entries, not ${ENTRIES}`);

    // The estimate's own cost, on the cached values themselves (what `set` and `update` pay).
    const sample = tokens.slice(0, 2_000).map((token) => held.get(token, appOrigin)!);
    const started = process.hrtime.bigint();
    let sink = 0;
    for (let round = 0; round < 20; round++) for (const value of sample) sink += estimateBytes(value);
    const estimateMicros = Number(process.hrtime.bigint() - started) / 1_000 / (20 * sample.length);
    if (sink === 0) throw new Error('no estimate');
    sample.length = 0;

    held.clear();
    gc();
    const emptied = process.memoryUsage();
    await services.close();
    const heap = filled.heapUsed - emptied.heapUsed;
    const reading: Reading = {
      profile: name,
      database: databaseUrl ? 'postgres' : 'sqlite',
      entries: ENTRIES,
      heapPerEntry: heap / ENTRIES,
      estimatedPerEntry: stats.bytes / ENTRIES,
      rssPerEntry: (filled.rss - before.rss) / ENTRIES,
      estimatedMiB: stats.bytes / 2 ** 20,
      heapMiB: heap / 2 ** 20,
      estimateMicros,
      baseRssMiB: before.rss / 2 ** 20,
      baseHeapMiB: before.heapUsed / 2 ** 20,
      fillSeconds,
    };
    console.log(JSON.stringify(reading));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const asked = process.env.BENCH_CACHE_PROFILES?.split(',') ?? Object.keys(PROFILES);
  for (const name of asked) if (!PROFILES[name]) throw new Error(`no profile ${name} (${Object.keys(PROFILES).join(', ')})`);
  // On PostgreSQL too when it is installed: its driver builds rows of another layout (see sizing.md).
  const postgres = process.env.BENCH_CACHE_POSTGRES !== '0' && postgresBinDir() ? await startPostgres() : undefined;
  const readings: Reading[] = [];
  try {
    for (const name of asked) {
      for (const databaseUrl of [undefined, ...(postgres ? [await postgres.createDatabase()] : [])]) {
        const args = ['--expose-gc', ...process.execArgv, fileURLToPath(import.meta.url), name, ...(databaseUrl ? [databaseUrl] : [])];
        const { stdout } = await execFileAsync(process.execPath, args, { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
        readings.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as Reading);
      }
    }
  } finally {
    postgres?.stop();
  }
  const per100k = (bytes: number) => ((bytes * 100_000) / 2 ** 20).toFixed(0);
  console.log(`Session cache entries (${ENTRIES.toLocaleString('en')} per profile and database; Node ${process.version}):`);
  console.log('profile   database  heap B/entry  estimate B/entry  estimate/heap  heap MiB/100k  estimate MiB/100k  RSS MiB/100k  estimate µs  base RSS MiB  base heap MiB  fill s');
  for (const r of readings) {
    console.log(
      [
        r.profile.padEnd(9),
        r.database.padEnd(8),
        r.heapPerEntry.toFixed(0).padStart(12),
        r.estimatedPerEntry.toFixed(0).padStart(16),
        (r.estimatedPerEntry / r.heapPerEntry).toFixed(2).padStart(13),
        per100k(r.heapPerEntry).padStart(13),
        per100k(r.estimatedPerEntry).padStart(17),
        per100k(r.rssPerEntry).padStart(12),
        r.estimateMicros.toFixed(2).padStart(11),
        r.baseRssMiB.toFixed(0).padStart(12),
        r.baseHeapMiB.toFixed(0).padStart(13),
        r.fillSeconds.toFixed(1).padStart(6),
      ].join('  '),
    );
  }
  for (const name of asked) console.log(`  ${name}: ${PROFILES[name]!.about}`);
}

const [asked, databaseUrl] = process.argv.slice(2);
await (asked ? child(asked, databaseUrl) : main());
