/**
 * The OpenID Provider's benchmark (bench/README.md, "The OpenID Provider"): code exchanges and refreshes
 * per second, and per second of the server's CPU, of Gatehouse's OP (the built server, one worker)
 * against a bare oidc-provider on the same storage (op-baseline.mjs), on SQLite and on PostgreSQL, in
 * alternating rounds; an authorization round trip with an existing session; and, when asked, the
 * back-channel logout bench (backchannel-logout.ts) in the same report.
 * `npm run build && BENCH_ONLY=op npm run bench`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { postgresBinDir, startPostgres, type TestPostgres } from '../packages/server/test/support/postgres.js';
import { formAction, NAVIGATION, ScriptedBrowser } from './lib/browser.js';
import { startGatehouse } from './lib/gatehouse.js';
import { cpuSeconds, cpuSecondsWithChildren, findProcesses, freePort, type ProcessGroup, type ServerProcess } from './lib/processes.js';
import { fixed, percentile, spread, table, thousands, type Spread } from './lib/stats.js';

export interface OpSettings {
  rounds: number;
  /** Codes prepared, then exchanged, per side and round. */
  codes: number;
  /** Seconds of refreshes per side and round. */
  refreshSeconds: number;
  /** Concurrent token requests. */
  connections: number;
  /** Authorization round trips timed one at a time, per side. */
  authorizations: number;
  postgres: boolean | 'when installed';
  /** Samples of the back-channel logout bench (0: left out). */
  backchannelSamples: number;
  /** Where both sides write a V8 CPU profile of their whole run as they stop (BENCH_PROFILE), if anywhere. */
  profileDir?: string;
}

const CLIENT = 'bench-oidc';
const SECRET = 'bench-oidc-secret-0123456789abcdefghijklmnopqrstuvwxyz';
// The redirect URI is never requested: the browser stops at it and reads the code.
const RP = 'http://127.0.0.1:9/callback';
const BASIC = `Basic ${Buffer.from(`${CLIENT}:${SECRET}`).toString('base64')}`;
// One PKCE pair for every code: both sides check it at each exchange alike.
const VERIFIER = 'bench-pkce-verifier-0123456789abcdefghijklmnopqrstuvwxyz-0123';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
// Gatehouse's own cost at most 20 % more CPU per request; Keycloak's published sizing, 120 refreshes/s per vCPU, times 5; p50 10 ms.
const TARGETS = { cpuRatio: 1.2, keycloakRefreshesPerVcpu: 120, keycloakMultiple: 5, authorizationP50Ms: 10 };

type Side = 'gatehouse' | 'baseline';

interface Subject {
  side: Side;
  database: string;
  origin: string;
  port: number;
  server: ServerProcess;
  /** Signed in (Gatehouse) or with the OP's session (the baseline): authorizations go straight to a code. */
  browser: ScriptedBrowser;
  pool: Pool;
  /** PostgreSQL's CPU seconds so far (its postmaster and every backend), when on PostgreSQL. */
  databaseCpu?: () => number | undefined;
}

interface Run {
  side: Side;
  database: string;
  kind: 'exchange' | 'refresh';
  round: number;
  requests: number;
  errors: number;
  firstError?: string;
  seconds: number;
  serverCpu: number;
  databaseCpu: number | undefined;
}

const execFileAsync = promisify(execFile);

function authorizationUrl(origin: string, withRefresh: boolean): string {
  const params = new URLSearchParams({
    client_id: CLIENT,
    response_type: 'code',
    redirect_uri: RP,
    // A refresh token needs offline_access, which oidc-provider honours with prompt=consent (OpenID Connect Core §11).
    scope: withRefresh ? 'openid email profile groups offline_access' : 'openid email profile groups',
    ...(withRefresh ? { prompt: 'consent' } : {}),
    state: 'bench-state',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  });
  return `${origin}/oidc/authorize?${params}`;
}

/** One authorization, as a browser follows it, to the code at the redirect URI (signing in at the development IdP when asked). */
async function authorize(browser: ScriptedBrowser, origin: string, withRefresh: boolean, login?: string): Promise<string> {
  const atRp = (next: URL) => next.origin === new URL(RP).origin || next.pathname === '/sign-in';
  let { hop, stoppedAt } = await browser.follow(await browser.request(authorizationUrl(origin, withRefresh), { headers: NAVIGATION }), atRp);
  if (stoppedAt?.pathname === '/sign-in') {
    if (!login) throw new Error('asked to sign in again');
    const rd = stoppedAt.searchParams.get('rd')!;
    ({ hop } = await browser.follow(await browser.request(`${origin}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`, { headers: NAVIGATION })));
    const action = formAction(hop.body);
    if (!action) throw new Error(`expected the IdP's login form, got ${hop.status} ${hop.url}`);
    const posted = await browser.request(new URL(action, hop.url).href, { form: { login, password: login.split('@')[0]! } });
    ({ hop, stoppedAt } = await browser.follow(posted, atRp));
  }
  const code = stoppedAt?.origin === new URL(RP).origin ? stoppedAt.searchParams.get('code') : null;
  if (!code) throw new Error(`no code: ${hop.status} ${hop.url} ${stoppedAt?.href ?? ""} ${/<main[\s\S]*?<\/main>/.exec(hop.body)?.[0]?.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ") ?? hop.body.replace(/<style[\s\S]*?<\/style>/g, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 400)}`);
  return code;
}

/**
 * `count` codes, four browsers at a time. Each is a copy of the signed-in one without the OP's own session
 * cookie (Gatehouse's session stays): two flows at once in one OP session fail by design, the second
 * finding its session changed by the first ("interaction session and authentication session mismatch").
 */
async function prepareCodes(subject: Subject, count: number): Promise<string[]> {
  const codes: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      const browser = subject.browser.clone((name) => name.startsWith('gatehouse_op_session') || name.startsWith('_session'));
      while (next < count) {
        next++;
        codes.push(await authorize(browser, subject.origin, true));
      }
    }),
  );
  return codes;
}

interface TokenAnswer {
  status: number;
  body: { refresh_token?: string; access_token?: string; id_token?: string; error?: string; error_description?: string };
}

async function tokenRequest(subject: Subject, form: Record<string, string>): Promise<TokenAnswer> {
  const answer = await subject.pool.request({
    method: 'POST',
    path: '/oidc/token',
    headers: { host: new URL(subject.origin).host, authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: answer.statusCode, body: (await answer.body.json()) as TokenAnswer['body'] };
}

const exchangeForm = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: RP, code_verifier: VERIFIER });

/** Requests from `lanes` concurrent loops, timed with the server's (and the database's) CPU. */
async function timed(subject: Subject, kind: Run['kind'], round: number, lanes: number, lane: (index: number, count: (answer: TokenAnswer) => void) => Promise<void>): Promise<Run> {
  let requests = 0;
  let errors = 0;
  let firstError: string | undefined;
  const count = (answer: TokenAnswer) => {
    if (answer.status === 200 && answer.body.access_token && answer.body.id_token) requests++;
    else {
      errors++;
      firstError ??= `${answer.status} ${answer.body.error ?? ''} ${answer.body.error_description ?? ''}`.trim();
    }
  };
  const cpu0 = cpuSeconds(subject.server.pid) ?? Number.NaN;
  const db0 = subject.databaseCpu?.();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: lanes }, (_, index) => lane(index, count)));
  const seconds = (performance.now() - t0) / 1000;
  const serverCpu = (cpuSeconds(subject.server.pid) ?? Number.NaN) - cpu0;
  const db1 = subject.databaseCpu?.();
  return { side: subject.side, database: subject.database, kind, round, requests, errors, firstError, seconds, serverCpu, databaseCpu: db0 === undefined || db1 === undefined ? undefined : db1 - db0 };
}

const BATCH = 200;

/** The batches of one side's exchanges in a round as one run: their requests, time and CPU added up. */
function merged(batches: Run[]): Run {
  const sum = (pick: (run: Run) => number) => batches.reduce((total, run) => total + pick(run), 0);
  const first = batches[0]!;
  const database = batches.every((run) => run.databaseCpu !== undefined) ? sum((run) => run.databaseCpu!) : undefined;
  const firstError = batches.find((run) => run.firstError)?.firstError;
  return { ...first, requests: sum((r) => r.requests), errors: sum((r) => r.errors), ...(firstError ? { firstError } : {}), seconds: sum((r) => r.seconds), serverCpu: sum((r) => r.serverCpu), databaseCpu: database };
}

/** Exchanges prepared codes, `connections` at a time; keeps the refresh tokens for the refresh run. */
async function exchange(subject: Subject, codes: string[], round: number, connections: number, refreshTokens: string[]): Promise<Run> {
  let next = 0;
  return timed(subject, 'exchange', round, connections, async (_index, count) => {
    while (next < codes.length) {
      const answer = await tokenRequest(subject, exchangeForm(codes[next++]!));
      count(answer);
      if (answer.body.refresh_token) refreshTokens.push(answer.body.refresh_token);
    }
  });
}

/** Refreshes for `seconds`, one rotating refresh token per connection (each answer's token is the next request's). */
async function refresh(subject: Subject, tokens: string[], round: number, seconds: number): Promise<Run> {
  const end = performance.now() + seconds * 1000;
  return timed(subject, 'refresh', round, tokens.length, async (index, count) => {
    let token = tokens[index]!;
    while (performance.now() < end) {
      const answer = await tokenRequest(subject, { grant_type: 'refresh_token', refresh_token: token });
      count(answer);
      if (!answer.body.refresh_token) return;
      token = answer.body.refresh_token;
    }
  });
}

/** Authorization round trips with the existing session, one at a time: milliseconds each. */
async function roundTrips(subject: Subject, samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await authorize(subject.browser, subject.origin, false);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

export interface OpReport {
  settings: OpSettings;
  postgresSkipped?: string;
  groups: Array<{
    database: string;
    kind: Run['kind'];
    gatehouse: { rps: Spread; perServerCpuSecond: Spread; perCpuSecondWithDatabase?: Spread };
    baseline: { rps: Spread; perServerCpuSecond: Spread; perCpuSecondWithDatabase?: Spread };
    /** Gatehouse ÷ baseline within a round, per round. */
    rpsRatio: Spread;
    cpuRatio: Spread;
  }>;
  authorization: Record<string, { gatehouseP50: number; gatehouseP99: number; baselineP50: number; samples: number }>;
  runs: Run[];
  backchannel?: string;
  invalid: string[];
}

export async function runOpBench(input: { root: string; workDir: string; processes: ProcessGroup; settings: OpSettings; say: (line?: string) => void }): Promise<OpReport> {
  const { root, workDir, processes, settings, say } = input;
  say(
    `OpenID Provider: ${settings.rounds} rounds; per side and round ${settings.codes} codes exchanged and ${settings.refreshSeconds} s of refreshes, ` +
      `${settings.connections} concurrent token requests (undici, in this process); ${settings.authorizations} authorization round trips one at a time`,
  );
  const subjects: Subject[] = [];
  const nodeArgs = settings.profileDir ? ['--cpu-prof', '--cpu-prof-dir', settings.profileDir] : [];
  let pg: TestPostgres | undefined;
  let postgresSkipped: string | undefined;
  const databases: Array<{ name: string; url?: string; cpu?: () => number | undefined }> = [{ name: 'SQLite' }];
  if (settings.postgres === false) postgresSkipped = 'BENCH_POSTGRES=0';
  else if (!postgresBinDir()) {
    postgresSkipped = 'PostgreSQL is not installed';
    if (settings.postgres === true) throw new Error(`BENCH_POSTGRES=1 but ${postgresSkipped}`);
  }
  try {
    if (!postgresSkipped) {
      pg = await startPostgres({ settings: { shared_buffers: '128MB', max_connections: '100' } });
      const server = pg;
      const postmaster = findProcesses((args) => (args[0]?.endsWith('/postgres') ?? false) && args.includes('-p') && args[args.indexOf('-p') + 1] === String(server.port))[0];
      if (postmaster === undefined) throw new Error(`the PostgreSQL server on port ${server.port} was not found`);
      databases.push({ name: 'PostgreSQL', url: await server.createDatabase(), cpu: () => cpuSecondsWithChildren(postmaster) });
      // The baseline's database of its own on the same server, so that neither side reads the other's rows.
      databases.push({ name: 'PostgreSQL-baseline', url: await server.createDatabase(), cpu: () => cpuSecondsWithChildren(postmaster) });
    }
    for (const database of databases.filter((d) => !d.name.endsWith('-baseline'))) {
      const tag = database.name === 'SQLite' ? 'sqlite' : 'pg';
      const gatehouse = await startGatehouse(processes, {
        root,
        workDir,
        name: `op-gatehouse-${tag}`,
        // The app "bench" is never requested here; its upstream need not listen.
        upstreamPort: await freePort(),
        ...(database.url ? { databaseUrl: database.url } : {}),
        oidcClient: { id: CLIENT, secret: SECRET, redirectUri: RP },
        nodeArgs,
      });
      const browser = new ScriptedBrowser(['localhost']);
      await authorize(browser, gatehouse.portalOrigin, true, 'alice@example.com');
      subjects.push({ side: 'gatehouse', database: database.name, origin: gatehouse.portalOrigin, port: gatehouse.port, server: gatehouse.server, browser, pool: new Pool(`http://127.0.0.1:${gatehouse.port}`, { connections: settings.connections }), ...(database.cpu ? { databaseCpu: database.cpu } : {}) });

      const folder = path.join(workDir, `op-baseline-${tag}`);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const baselineUrl = databases.find((d) => d.name === `${database.name}-baseline`)?.url;
      const args = { ...(baselineUrl ? { databaseUrl: baselineUrl } : { sqlitePath: path.join(folder, 'baseline.sqlite') }), dataDir: folder, clientId: CLIENT, secret: SECRET, redirectUri: RP };
      const server = processes.start(`op-baseline-${tag}`, [...nodeArgs, path.join(root, 'bench/op-baseline.mjs'), JSON.stringify(args)], { cwd: root });
      const port = Number((await server.waitForOutput(/listening (\d+)/, 30_000))[1]);
      const origin = `http://localhost:${port}`;
      const baselineBrowser = new ScriptedBrowser(['localhost']);
      await authorize(baselineBrowser, origin, true);
      subjects.push({ side: 'baseline', database: database.name, origin, port, server, browser: baselineBrowser, pool: new Pool(`http://127.0.0.1:${port}`, { connections: settings.connections }), ...(database.cpu ? { databaseCpu: database.cpu } : {}) });
      say(`setup: ${database.name}: Gatehouse :${gatehouse.port} (pid ${gatehouse.server.pid}, alice signed in through the development IdP), bare oidc-provider :${port} (pid ${server.pid})`);
    }
    if (postgresSkipped) say(`setup: PostgreSQL left out: ${postgresSkipped}`);

    // ---- authorization round trips with an existing session, one at a time
    const authorization: OpReport['authorization'] = {};
    for (const name of [...new Set(subjects.map((s) => s.database))]) {
      const gatehouse = subjects.find((s) => s.database === name && s.side === 'gatehouse')!;
      const baseline = subjects.find((s) => s.database === name && s.side === 'baseline')!;
      // Warm-up: a tenth of the samples each, not counted.
      await roundTrips(gatehouse, Math.ceil(settings.authorizations / 10));
      await roundTrips(baseline, Math.ceil(settings.authorizations / 10));
      const g = await roundTrips(gatehouse, settings.authorizations);
      const b = await roundTrips(baseline, settings.authorizations);
      authorization[name] = { gatehouseP50: percentile(g, 50), gatehouseP99: percentile(g, 99), baselineP50: percentile(b, 50), samples: settings.authorizations };
      say(`authorization round trip, ${name}: Gatehouse p50 ${fixed(percentile(g, 50), 2)} ms, p99 ${fixed(percentile(g, 99), 2)} ms; bare oidc-provider p50 ${fixed(percentile(b, 50), 2)} ms`);
    }

    // ---- rounds: each side prepares its codes, exchanges them, then refreshes; the order flips every other round
    const runs: Run[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      for (const name of [...new Set(subjects.map((s) => s.database))]) {
        const pair = subjects.filter((s) => s.database === name);
        for (const subject of round % 2 === 0 ? [...pair].reverse() : pair) {
          // In batches of at most 200: a code lives 60 s, and preparing 1,000 on a busy machine could take longer.
          const tokens: string[] = [];
          const batches: Run[] = [];
          for (let done = 0; done < settings.codes; done += BATCH) {
            const codes = await prepareCodes(subject, Math.min(BATCH, settings.codes - done));
            batches.push(await exchange(subject, codes, round, settings.connections, tokens));
          }
          const exchanged = merged(batches);
          const refreshed = await refresh(subject, tokens.slice(0, settings.connections), round, settings.refreshSeconds);
          for (const run of [exchanged, refreshed]) {
            runs.push(run);
            const rate = run.requests / run.seconds;
            say(
              `round ${round}/${settings.rounds}  ${name.padEnd(10)} ${run.side.padEnd(9)} ${run.kind.padEnd(8)} ${thousands(rate).padStart(6)} req/s  ` +
                `server CPU ${fixed((run.serverCpu / run.requests) * 1e6, 0).padStart(5)} µs/req${run.databaseCpu === undefined ? '' : `  database CPU ${fixed((run.databaseCpu / run.requests) * 1e6, 0)} µs/req`}` +
                (run.errors ? `  INVALID: ${run.errors} errors, first: ${run.firstError}` : ''),
            );
          }
        }
      }
    }

    // ---- report
    const invalid = runs.filter((r) => r.errors > 0).map((r) => `${r.database} ${r.side} ${r.kind} round ${r.round}: ${r.errors} errors (${r.firstError})`);
    const groups: OpReport['groups'] = [];
    for (const name of [...new Set(subjects.map((s) => s.database))]) {
      for (const kind of ['exchange', 'refresh'] as const) {
        const of = (side: Side) => runs.filter((r) => r.database === name && r.kind === kind && r.side === side);
        const figures = (list: Run[]) => ({
          rps: spread(list.map((r) => r.requests / r.seconds)),
          perServerCpuSecond: spread(list.map((r) => r.requests / r.serverCpu)),
          ...(list[0]?.databaseCpu !== undefined ? { perCpuSecondWithDatabase: spread(list.map((r) => r.requests / (r.serverCpu + (r.databaseCpu ?? 0)))) } : {}),
        });
        const g = of('gatehouse');
        const b = of('baseline');
        const pairs = g.map((run) => [run, b.find((other) => other.round === run.round)!] as const);
        groups.push({
          database: name,
          kind,
          gatehouse: figures(g),
          baseline: figures(b),
          rpsRatio: spread(pairs.map(([x, y]) => x.requests / x.seconds / (y.requests / y.seconds))),
          cpuRatio: spread(pairs.map(([x, y]) => x.serverCpu / x.requests / (y.serverCpu / y.requests))),
        });
      }
    }
    say();
    say('OPENID PROVIDER (medians over the rounds, min–max; "per CPU-s": requests per second of the server process\'s CPU, i.e. per core)');
    say(
      table(
        ['database', 'request', 'Gatehouse req/s', 'per CPU-s', 'bare oidc-provider req/s', 'per CPU-s', 'Gatehouse ÷ bare req/s', 'CPU/req ratio', 'Gatehouse per CPU-s with the database'],
        groups.map((group) => [
          group.database,
          group.kind === 'exchange' ? 'code exchange' : 'refresh',
          thousands(group.gatehouse.rps.median),
          thousands(group.gatehouse.perServerCpuSecond.median),
          thousands(group.baseline.rps.median),
          thousands(group.baseline.perServerCpuSecond.median),
          `${fixed(group.rpsRatio.median, 2)} (${fixed(group.rpsRatio.min, 2)}–${fixed(group.rpsRatio.max, 2)})`,
          fixed(group.cpuRatio.median, 2),
          group.gatehouse.perCpuSecondWithDatabase ? thousands(group.gatehouse.perCpuSecondWithDatabase.median) : '(in process)',
        ]),
      ),
    );
    for (const problem of invalid) say(`INVALID: ${problem}`);
    const verdict = (met: boolean) => (invalid.length ? 'INVALID RUN' : met ? 'PASS' : 'MISS');
    for (const group of groups) {
      // Gatehouse's own cost: at most 20 % slower than the bare provider, on the server's CPU per request.
      const slower = group.cpuRatio.median - 1;
      say(`target: ${group.database} ${group.kind}: Gatehouse's own cost ${fixed(slower * 100, 0)} % more CPU per request than the bare oidc-provider (${fixed(group.rpsRatio.median, 2)} × its req/s), ≤ 20 %: ${verdict(group.cpuRatio.median <= TARGETS.cpuRatio)}`);
      if (group.kind === 'refresh') {
        const multiple = group.gatehouse.perServerCpuSecond.median / TARGETS.keycloakRefreshesPerVcpu;
        say(`target: ${group.database} refreshes per core ${thousands(group.gatehouse.perServerCpuSecond.median)} = ${fixed(multiple, 1)} × Keycloak's published 120 per vCPU, aim ≥ 5 ×: ${verdict(multiple >= TARGETS.keycloakMultiple)}`);
      }
    }
    for (const [name, a] of Object.entries(authorization)) {
      say(`target: ${name} authorization round trip with an existing session, p50 ${fixed(a.gatehouseP50, 2)} ms ≤ 10 ms: ${verdict(a.gatehouseP50 <= TARGETS.authorizationP50Ms)}`);
    }

    let backchannel: string | undefined;
    if (settings.backchannelSamples > 0) {
      say();
      say(`BACK-CHANNEL LOGOUT (bench/backchannel-logout.ts, ${settings.backchannelSamples} samples)`);
      const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', path.join(root, 'bench/backchannel-logout.ts')], {
        cwd: root,
        env: { ...process.env, BENCH_SAMPLES: String(settings.backchannelSamples) },
        maxBuffer: 1 << 24,
      });
      backchannel = stdout.trimEnd();
      say(backchannel);
    }
    return { settings, ...(postgresSkipped ? { postgresSkipped } : {}), groups, authorization, runs, ...(backchannel ? { backchannel } : {}), invalid };
  } finally {
    await Promise.all(subjects.map((s) => s.pool.close()));
    await processes.stopAll();
    pg?.stop();
  }
}
