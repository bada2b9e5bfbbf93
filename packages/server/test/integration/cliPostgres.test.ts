import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { createServices } from '../../src/services.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const run = promisify(execFile);

interface Outcome {
  code: number;
  out: string;
}

/** The built command line, as an operator runs it: its exit code and everything it printed. */
async function gatehouse(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** `check-config`, `migrate` and `rotate-signing-key` against a real PostgreSQL server. */
describe('the command line on PostgreSQL', () => {
  let server: TestPostgres;
  let dir: string;
  let file: string;
  const secrets = { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] };

  beforeAll(async () => {
    server = await startPostgres();
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-cli-'));
    file = path.join(dir, 'gatehouse.yaml');
    // The database comes from GATEHOUSE_DATABASE_URL, as in a container; the rest from the file.
    writeFileSync(
      file,
      JSON.stringify({
        mode: 'production',
        publicUrl: 'https://login.example.com',
        dataDir: path.join(dir, 'data'),
        secrets,
        providers: [{ id: 'corp', name: 'Corp', issuer: 'https://idp.example.com', clientId: 'gatehouse', clientSecret: 'x' }],
      }),
    );
  }, 60_000);
  afterAll(() => {
    server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A new empty database's URL, with a password in it (trust authentication ignores it; the output must not show it). */
  const newDatabase = async () => (await server.createDatabase()).replace('gatehouse@', 'gatehouse:s3cret-pass@');

  // Threat: a database password printed by a command whose output ends up in CI logs.
  it('check-config names the PostgreSQL database without its password', async () => {
    const url = await newDatabase();
    const { code, out } = await gatehouse(['check-config', '--config', file], { GATEHOUSE_DATABASE_URL: url });
    expect(code).toBe(0);
    expect(out).toContain(`database PostgreSQL ${url.replace('s3cret-pass', '***')}`);
    expect(out).not.toContain('s3cret-pass');
  });

  it('migrate run by several nodes at once: they take turns, all succeed, the schema is made once', async () => {
    const url = await newDatabase();
    const outcomes = await Promise.all([1, 2].map(() => gatehouse(['migrate', '--config', file], { GATEHOUSE_DATABASE_URL: url })));
    expect(outcomes.map((outcome) => outcome.code)).toEqual([0, 0]);
    // One of them ran the migrations; the others found nothing to do.
    expect(outcomes.filter((outcome) => outcome.out.includes(': ran '))).toHaveLength(1);
    for (const { out } of outcomes) {
      expect(out).toContain('Database schema is up to date (PostgreSQL');
      expect(out).not.toContain('s3cret-pass');
    }
    const again = await gatehouse(['migrate', '--config', file], { GATEHOUSE_DATABASE_URL: url });
    expect(again).toMatchObject({ code: 0 });
    expect(again.out).not.toContain(': ran ');
  });

  // Threat: an older build running on (and writing to) a schema a newer one has changed.
  it('migrate refuses a schema newer than this build, saying so', async () => {
    const url = await newDatabase();
    expect((await gatehouse(['migrate', '--config', file], { GATEHOUSE_DATABASE_URL: url })).code).toBe(0);
    const { Kysely, PostgresDialect } = await import('kysely');
    const pg = (await import('pg')).default;
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
    try {
      await sql`insert into gatehouse_migrations (name, timestamp) values ('9999_from_the_future', now()::text)`.execute(db);
    } finally {
      await db.destroy();
    }
    const { code, out } = await gatehouse(['migrate', '--config', file], { GATEHOUSE_DATABASE_URL: url });
    expect(code).toBe(1);
    expect(out).toContain('the database schema is newer than this Gatehouse');
    expect(out).not.toMatch(/\n\s+at /);
  });

  // Threat: a key rotated during an incident, while the running nodes go on signing with the old one.
  it('rotate-signing-key: the running nodes sign with the new key at once', async () => {
    const url = await newDatabase();
    const log = pino({ enabled: false });
    const node = await createServices(parseConfig({ publicUrl: 'https://login.example.com', dataDir: dir, database: { url }, secrets }, { env: {} }), log);
    try {
      for (let waited = 0; node.changes.status() !== 'listening'; waited += 20) {
        if (waited > 10_000) throw new Error('the node did not listen');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const before = node.signingKeys.current().kid;
      const { code, out } = await gatehouse(['rotate-signing-key', '--config', file], { GATEHOUSE_DATABASE_URL: url });
      expect(code).toBe(0);
      const kid = /New assertion signing key: (\S+)/.exec(out)?.[1];
      expect(kid).toBeDefined();
      expect(kid).not.toBe(before);
      expect(out).toContain('The running nodes sign with it from now on.');
      await expect.poll(() => node.signingKeys.current().kid).toBe(kid);
    } finally {
      await node.close();
    }
  });
});
