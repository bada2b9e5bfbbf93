import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

/**
 * Throwaway PostgreSQL servers for tests: initdb in a temporary folder, a free loopback port, no
 * durability (fsync off: nothing here needs to survive a crash), stopped and removed at the end.
 * PostgreSQL refuses to run as root, so as root the server is the `postgres` user's (runuser).
 * Debian's binaries are not on PATH: they are found under /usr/lib/postgresql/<version>/bin
 * (scripts/test.sh installs the `postgresql` package when it is missing).
 */

export interface TestPostgres {
  /** postgres://gatehouse@127.0.0.1:<port>/postgres */
  adminUrl: string;
  port: number;
  /** A new database, empty or a copy of `template` (a database name); its URL. */
  createDatabase(template?: string): Promise<string>;
  /**
   * Stops the server as an operator's restart does (`pg_ctl stop -m fast`: open connections are ended,
   * running transactions rolled back) and keeps its data; `resume` starts it again on the same port.
   * Both leave the test's event loop running, so traffic can go on meanwhile.
   */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): void;
}

/** The bin folder of the newest PostgreSQL installed, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

const running = new Set<TestPostgres>();
let exitHook = false;

export interface PostgresOptions {
  /** The server's max_connections (60 unless told): a run of many Gatehouse pools needs more. */
  maxConnections?: number;
  /**
   * Extra `-c name=value` server settings, after (and so over) the ones below: the benchmark gives
   * PostgreSQL its default shared_buffers and room for more connections.
   */
  settings?: Record<string, string>;
}

/** Creates a new database on the server of `adminUrl`, empty or a copy of `template` (a database name); its URL. */
export async function createDatabaseOn(adminUrl: string, template?: string): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}${template ? ` template ${pg.escapeIdentifier(template)}` : ''} strategy file_copy`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/** Drops the database of `databaseUrl` (made by createDatabaseOn), ending any connection still open to it. */
export async function dropDatabaseOn(adminUrl: string, databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}

export async function startPostgres(wanted: PostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql; scripts/test.sh does it when run as root)');
  const asRoot = process.getuid?.() === 0;
  const folder = mkdtempSync(path.join(tmpdir(), 'gatehouse-pg-'));
  const data = path.join(folder, 'data');
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
    chownSync(folder, uid!, gid!);
  }
  const commandOf = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
  const run = (tool: string, args: string[]) => {
    const result = spawnSync(...commandOf(tool, args), { encoding: 'utf8', cwd: folder });
    if (result.status !== 0) throw new Error(`${tool} failed (${result.status}): ${result.stderr || result.stdout}`);
  };
  const runInBackground = (tool: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(...commandOf(tool, args), { encoding: 'utf8', cwd: folder }, (error, stdout, stderr) =>
        error ? reject(new Error(`${tool} failed: ${stderr || stdout || error.message}`)) : resolve(),
      );
    });

  run('initdb', ['-D', data, '-A', 'trust', '-U', 'gatehouse', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  let port = 0;
  let options = '';
  let paused = false;
  const startArgs = () => ['start', '-w', '-t', '30', '-D', data, '-l', path.join(folder, 'log'), '-o', options];
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    options = [
      `-p ${port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=${folder}`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      `-c max_connections=${wanted.maxConnections ?? 60}`,
      '-c shared_buffers=16MB',
      ...Object.entries(wanted.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
    ].join(' ');
    try {
      run('pg_ctl', startArgs());
      break;
    } catch (error) {
      // Another process took the port in between: try another one.
      if (attempt >= 2) {
        rmSync(folder, { recursive: true, force: true });
        throw error;
      }
    }
  }

  const adminUrl = `postgres://gatehouse@127.0.0.1:${port}/postgres`;
  const server: TestPostgres = {
    adminUrl,
    port,
    createDatabase: (template?: string) => createDatabaseOn(adminUrl, template),
    async pause() {
      await runInBackground('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data]);
      paused = true;
    },
    async resume() {
      await runInBackground('pg_ctl', startArgs());
      paused = false;
    },
    stop() {
      if (!running.delete(server)) return;
      try {
        if (!paused) run('pg_ctl', ['stop', '-m', 'immediate', '-D', data]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
  running.add(server);
  if (!exitHook) {
    exitHook = true;
    // A test run that ends without its afterAll still leaves nothing running.
    process.once('exit', () => {
      for (const leftover of [...running]) {
        try {
          leftover.stop();
        } catch {
          // best effort at exit
        }
      }
    });
  }
  return server;
}

