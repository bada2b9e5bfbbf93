import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { postgresBinDir, startPostgres, type TestPostgres } from '../../packages/server/test/support/postgres.js';
import { signInToApp } from './browser.js';
import { launchGatehouse, prepareGatehouse, startGatehouse, type GatehouseOptions, type RunningGatehouse, type SharedSecrets } from './gatehouse.js';
import type { Scenario, ScenarioName } from './load.js';
import { measurePropagation, type PropagationResult } from './propagation.js';
import { busiestBetween, cpuSeconds, cpuSecondsWithChildren, everyProcessCpu, findProcesses, machineBusySeconds, type ProcessGroup, type ServerProcess } from './processes.js';
import { fillSessions, openSeeder } from './seed.js';
import { percentile } from './stats.js';

/**
 * The measurements at scale (bench/README.md, "At scale"): PostgreSQL beside SQLite, two workers beside
 * one, forward-auth over many distinct sessions (more than the session cache holds), the first request
 * of a session, the same with a million more sessions in the table, and a revocation's way from one
 * node to another. Every node is the built server, in development mode with its development IdP, like
 * the main one; what differs is named where it is started.
 */
export interface ScaleSettings {
  /** Distinct signed-in sessions in rotation (100,000). */
  sessions: number;
  /** Filler sessions added to the large table (1,000,000). */
  filler: number;
  /** Revocations timed across two nodes. */
  propagationSamples: number;
  /** Fresh sessions whose first request is timed one at a time, per node. */
  firstRequests: number;
  /** PostgreSQL: on, off, or when installed. */
  postgres: boolean | 'when installed';
}

export interface Latency {
  p50: number;
  p90: number;
  p99: number;
}

export interface ScaleSetup {
  scenarios: Scenario[];
  groups: ScenarioName[][];
  servers: ServerProcess[];
  postgres: boolean;
  /** Why PostgreSQL was left out, when it was. */
  postgresSkipped?: string;
  /** Per node of many sessions: its two reviews at start of every live session (sessions judged, wall ms). */
  startReviews: Array<{ node: string; database: string; passes: Array<{ sessions: number; ms: number }> }>;
  /** Per node: one request at a time, the first request of fresh sessions (cold) and one session's again (warm), ms. */
  firstRequests: Array<{ node: string; database: string; tableRows: number; cold: Latency; warm?: Latency; machineLoad?: number | undefined; otherLoad?: number | undefined; busiest?: string | undefined }>;
  propagation?: PropagationResult;
  /** Seconds spent on writing sessions with the stores, and on the filler. */
  seeding: { sessions: number; storeSeconds: number; filler: number; fillerSeconds: number };
  stop(): Promise<void>;
}

/**
 * The nodes with many sessions: no claims re-check comes due during a run (the sessions carry no
 * refresh token), and a session cache of 64 MiB, about 15,800 of these sessions (docs/operations/sizing.md):
 * far fewer than the rotation's 100,000, so that every check of it is a miss whatever the default budget.
 */
const SCALE_SESSION = { claimsRefreshInterval: '24h', cache: { maxMemory: '64MiB' } };

/**
 * The two passes of the review a node makes at start of every live session against the sign-in rules
 * (sessions/admissionReview.ts): its log lines, at info. On a node of a million sessions they take a
 * core for a while; nothing is timed before they have finished, and the report gives their cost.
 */
const START_REVIEWS = /"by":"start"[^\n]*"sessionsJudged":(\d+)[^\n]*"ms":(\d+)[\s\S]*"by":"start"[^\n]*"sessionsJudged":(\d+)[^\n]*"ms":(\d+)/;

/** Waits for a node's two start reviews; how many sessions each judged, and in how many ms. */
async function startReviews(node: RunningGatehouse): Promise<Array<{ sessions: number; ms: number }>> {
  const match = await node.server.waitForOutput(START_REVIEWS, 600_000);
  return [
    { sessions: Number(match[1]), ms: Number(match[2]) },
    { sessions: Number(match[3]), ms: Number(match[4]) },
  ];
}

export async function setUpScale(input: {
  processes: ProcessGroup;
  root: string;
  workDir: string;
  upstreamPort: number;
  upstream: ServerProcess;
  /** The main Gatehouse (SQLite, one process) and the requests the main groups send it. */
  main: RunningGatehouse;
  forwardAuthHeaders: Record<string, string>;
  proxyHeaders: Record<string, string>;
  settings: ScaleSettings;
  say: (line?: string) => void;
  /** Node options of every node started here (BENCH_PROFILE: a CPU profile of each). */
  nodeArgs?: readonly string[];
}): Promise<ScaleSetup> {
  const { processes, root, workDir, upstreamPort, main, settings, say } = input;
  const secrets: SharedSecrets = {
    cookieKey: randomBytes(32).toString('base64url'),
    encryptionKeys: [{ id: 'bench', key: randomBytes(32).toString('base64url') }],
  };
  const base: Omit<GatehouseOptions, 'name'> = { root, workDir, upstreamPort, secrets, ...(input.nodeArgs ? { nodeArgs: input.nodeArgs } : {}) };
  const scenarios: Scenario[] = [];
  const servers: ServerProcess[] = [];
  const firstRequests: ScaleSetup['firstRequests'] = [];
  const startReviewTimes: ScaleSetup['startReviews'] = [];
  const seeding = { sessions: settings.sessions, storeSeconds: 0, filler: settings.filler, fillerSeconds: 0 };
  let pgServer: TestPostgres | undefined;
  const stop = async () => {
    pgServer?.stop();
    pgServer = undefined;
  };

  const forwardAuth = (name: ScenarioName, node: RunningGatehouse, cookie: string, extra: Partial<Scenario> = {}): Scenario => ({
    name,
    url: `http://127.0.0.1:${node.port}/.gatehouse/auth/${node.appId}`,
    headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': node.appHost, 'x-forwarded-uri': '/some/path', 'x-forwarded-method': 'GET', cookie },
    server: node.server,
    ...extra,
  });
  const signIn = async (node: RunningGatehouse) => {
    const result = await signInToApp({ appOrigin: node.appOrigin, portalOrigin: node.portalOrigin, providerId: node.providerId, login: 'alice@example.com', password: 'alice' });
    return { cookie: `${result.cookieName}=${result.token}`, portalCookie: result.portalCookie };
  };

  // ---- SQLite, one process against two workers: the main node is the one process.
  scenarios.push({ ...forwardAuth('forward-auth-1w', main, input.forwardAuthHeaders.cookie!), headers: input.forwardAuthHeaders });
  scenarios.push({ name: 'proxy-sqlite', url: `http://127.0.0.1:${main.port}/some/path`, headers: input.proxyHeaders, server: main.server, helpers: [input.upstream] });
  const twoWorkers = await startGatehouse(processes, { ...base, name: 'gatehouse-2w', workers: 2 });
  servers.push(twoWorkers.server);
  scenarios.push(forwardAuth('forward-auth-2w', twoWorkers, (await signIn(twoWorkers)).cookie, { serverPids: twoWorkers.answeringPids }));
  say(`setup: Gatehouse with 2 workers :${twoWorkers.port} (primary ${twoWorkers.server.pid}, workers ${twoWorkers.answeringPids().slice(1).join(', ')}), SQLite; alice signed in`);

  // ---- Many sessions: a node with `sessions` of them, and one with a copy of that table and `filler` more.
  // Each database's first requests are timed once everything is set up, on a machine with nothing else to do.
  const timings: Array<{ database: string; nodes: RunningGatehouse[]; warmCookie: string; floor: { server: ServerProcess; port: number } }> = [];
  const manySessions = async (suffix: '' | '-pg', databases?: { small: string; large: () => Promise<string>; cpu: Scenario['helperGroups'] }) => {
    const site = await prepareGatehouse({ ...base, name: `gatehouse-100k${suffix}`, session: SCALE_SESSION, ...(databases ? { databaseUrl: databases.small } : {}) });
    let small = await launchGatehouse(processes, site);
    const { cookie: warmCookie } = await signIn(small);
    const started = performance.now();
    const seeder = await openSeeder(small.file);
    const seeded = await seeder.sessions({ email: 'alice@example.com', appId: small.appId, appOrigin: small.appOrigin, count: settings.sessions });
    await seeder.settle();
    await seeder.close();
    seeding.storeSeconds += (performance.now() - started) / 1000;
    // The copy is taken with the node stopped (a PostgreSQL template must have no connections), then it
    // starts again as the same site, on a new port.
    await processes.stop(small.server);
    const siteOptions = { portalOrigin: small.portalOrigin, appOrigin: small.appOrigin };
    const large = await prepareGatehouse({
      ...base,
      logLevel: 'info',
      name: `gatehouse-100k-1m${suffix}`,
      session: SCALE_SESSION,
      site: siteOptions,
      ...(databases ? { databaseUrl: await databases.large() } : {}),
    });
    if (!databases) {
      for (const suffix of ['', '-wal']) {
        const file = path.join(small.dataDir, `gatehouse.db${suffix}`);
        if (existsSync(file)) await copyFile(file, path.join(large.dataDir, `gatehouse.db${suffix}`));
      }
    }
    const fillStarted = performance.now();
    const filler = await openSeeder(large.file);
    await fillSessions(filler, { count: settings.filler, users: Math.max(1, Math.round(settings.filler / 100)), appId: large.appId, appOrigin: large.appOrigin });
    const largeRows = await filler.countSessions();
    await filler.close();
    seeding.fillerSeconds += (performance.now() - fillStarted) / 1000;
    const smallAgain = await prepareGatehouse({ ...base, name: `gatehouse-100k${suffix}`, logLevel: 'info', session: SCALE_SESSION, site: siteOptions, ...(databases ? { databaseUrl: databases.small } : {}) });
    const [smallNode, largeNode] = await Promise.all([launchGatehouse(processes, smallAgain), launchGatehouse(processes, large)]);
    small = smallNode;
    servers.push(small.server, largeNode.server);
    const database = databases ? 'PostgreSQL' : 'SQLite';
    const cookies = path.join(workDir, `cookies-100k${suffix}.txt`);
    await writeFile(cookies, `${seeded.tokens.map((token) => `gatehouse_app=${token}`).join('\n')}\n`);
    const extra = { rotateCookies: cookies, ...(databases?.cpu ? { helperGroups: databases.cpu } : {}) };
    scenarios.push(forwardAuth(`forward-auth-100k${suffix}` as ScenarioName, small, warmCookie, extra));
    scenarios.push(forwardAuth(`forward-auth-100k-1m${suffix}` as ScenarioName, largeNode, warmCookie, extra));
    // The floor beside them, on the small node's database: every request a miss, and nothing but the read and the signature.
    const floorArgs = { ...(databases ? { databaseUrl: databases.small } : { sqlitePath: path.join(small.dataDir, 'gatehouse.db') }), dataDir: small.dataDir, appOrigin: small.appOrigin, issuer: small.portalOrigin };
    const floor = processes.start(`miss-floor-100k${suffix}`, [...(input.nodeArgs ?? []), path.join(root, 'bench/miss-floor.mjs'), JSON.stringify(floorArgs)], { cwd: root });
    const floorPort = Number((await floor.waitForOutput(/listening (\d+)/, 30_000))[1]);
    servers.push(floor);
    scenarios.push({ ...forwardAuth(`miss-floor-100k${suffix}` as ScenarioName, small, warmCookie, extra), url: `http://127.0.0.1:${floorPort}/.gatehouse/auth/${small.appId}`, server: floor });
    timings.push({ database, nodes: [small, largeNode], warmCookie, floor: { server: floor, port: floorPort } });
    say(
      `setup: ${database}: ${thousandsOf(settings.sessions)} sessions of alice written by the stores (${small.server.name} :${small.port}), ` +
        `and a copy with ${thousandsOf(largeRows - seeded.tokens.length - 1)} filler sessions, ${thousandsOf(largeRows)} in all (${largeNode.server.name} :${largeNode.port})`,
    );
  };

  // ---- PostgreSQL: a node beside the main one, a second node on the same database, many sessions.
  const wanted = settings.postgres;
  let postgresSkipped: string | undefined;
  if (wanted === false) postgresSkipped = 'BENCH_POSTGRES=0';
  else if (!postgresBinDir()) {
    postgresSkipped = 'PostgreSQL is not installed (Debian: apt-get install postgresql; `npm test` installs it)';
    if (wanted === true) throw new Error(`BENCH_POSTGRES=1 but ${postgresSkipped}`);
  }
  let propagation: PropagationResult | undefined;
  let measureLater: (() => Promise<void>) | undefined;
  const postgresPart = async () => {
    // PostgreSQL's own defaults where they matter here (shared_buffers 128MB), no durability (fsync off,
    // as in the tests: nothing of it needs to survive), and connections for every node's pool.
    pgServer = await startPostgres({ settings: { shared_buffers: '128MB', max_connections: '200' } });
    const server = pgServer;
    // PostgreSQL's CPU is the database's share of each request (SQLite's is in Gatehouse's own process):
    // its server process and every backend (one per connection of Gatehouse's pools, and those that
    // ended), read around each run.
    const postmaster = findProcesses((args) => (args[0]?.endsWith('/postgres') ?? false) && args.includes('-p') && args[args.indexOf('-p') + 1] === String(server.port))[0];
    if (postmaster === undefined) throw new Error(`the PostgreSQL server on port ${server.port} was not found among the processes`);
    const database = [{ name: 'postgres', cpuSeconds: () => cpuSecondsWithChildren(postmaster) }];
    const mainUrl = await server.createDatabase();
    const nodeA = await startGatehouse(processes, { ...base, name: 'gatehouse-pg', databaseUrl: mainUrl });
    const nodeB = await startGatehouse(processes, { ...base, name: 'gatehouse-pg-b', databaseUrl: mainUrl, site: { portalOrigin: nodeA.portalOrigin, appOrigin: nodeA.appOrigin } });
    servers.push(nodeA.server, nodeB.server);
    const signedIn = await signIn(nodeA);
    scenarios.push(forwardAuth('forward-auth-pg', nodeA, signedIn.cookie, { helperGroups: database }));
    scenarios.push({
      name: 'proxy-pg',
      url: `http://127.0.0.1:${nodeA.port}/some/path`,
      headers: { host: nodeA.appHost, cookie: signedIn.cookie },
      server: nodeA.server,
      helpers: [input.upstream],
      helperGroups: database,
    });
    say(`setup: PostgreSQL ${server.port}: Gatehouse :${nodeA.port} and a second node :${nodeB.port} on the same database, the same secrets and names; alice signed in on the first`);

    if (settings.propagationSamples > 0) {
      if (!signedIn.portalCookie) throw new Error('propagation: no portal cookie after signing in');
      const portalCookie = signedIn.portalCookie;
      const seeder = await openSeeder(nodeA.file);
      const seeded = await seeder.sessions({ email: 'alice@example.com', appId: nodeA.appId, appOrigin: nodeA.appOrigin, count: settings.propagationSamples });
      await seeder.close();
      measureLater = async () => {
        propagation = await measurePropagation({
          nodeA,
          nodeB,
          portalOrigin: nodeA.portalOrigin,
          portalCookie,
          appId: nodeA.appId,
          appHost: nodeA.appHost,
          sessions: seeded.sessionIds.map((id, index) => ({ id, token: seeded.tokens[index]! })),
        });
        say(
          `setup: ${propagation.samples} revocations on node A, each refused by node B after p50 ${propagation.refused.p50.toFixed(2)} ms, ` +
            `p99 ${propagation.refused.p99.toFixed(2)} ms (max ${propagation.refused.max.toFixed(2)}; ${propagation.missed} never)`,
        );
      };
    }

    const smallUrl = await server.createDatabase();
    await manySessions('-pg', { small: smallUrl, large: () => copyOf(server, new URL(smallUrl).pathname.slice(1)), cpu: database });
  };

  // The two databases are set up at once (SQLite's work is in this process, PostgreSQL's mostly in its
  // own), then everything that is timed here runs alone.
  await Promise.all([manySessions(''), postgresSkipped ? undefined : postgresPart()]);
  await measureLater?.();
  // Not while any node's start reviews still run (they read every live session: a core, and
  // PostgreSQL's, for half a minute on the nodes of a million).
  for (const { database, nodes } of timings) {
    for (const node of nodes) startReviewTimes.push({ node: node.server.name, database, passes: await startReviews(node) });
  }
  const quiet = await quietMachine();
  say(`setup: every node's start reviews ended, then the machine quiet after ${quiet.waited.toFixed(0)} s (\`sync\` first); ${quiet.load.toFixed(2)} CPUs busy`);
  for (const { database, nodes, warmCookie, floor } of timings) {
    // Sessions timed alone, first request each, before any load, on each node sessions of its own written
    // now (a session signed in moments ago, so its first request records no activity: see
    // bench/README.md), after as many untimed, so that the code of a first request is compiled. On the
    // node of 100,000 sessions as many more are then timed on the miss floor, which reads the same
    // database (its warm-up: the node's untimed sessions again).
    for (const [index, node] of nodes.entries()) {
      const withFloor = index === 0;
      const writer = await openSeeder(node.file);
      const fresh = await writer.sessions({ email: 'alice@example.com', appId: node.appId, appOrigin: node.appOrigin, count: (withFloor ? 3 : 2) * settings.firstRequests });
      const tableRows = await writer.countSessions();
      await writer.close();
      const untimed = fresh.tokens.slice(0, settings.firstRequests);
      const timed = fresh.tokens.slice(settings.firstRequests, 2 * settings.firstRequests);
      firstRequests.push({ node: node.server.name, database, tableRows, ...(await withMachineLoad(node.server, () => oneAtATime(node, untimed, timed, warmCookie))) });
      if (withFloor) {
        const { cold, machineLoad, otherLoad, busiest } = await withMachineLoad(floor.server, () =>
          oneAtATime({ ...node, port: floor.port, server: floor.server }, untimed, fresh.tokens.slice(2 * settings.firstRequests), warmCookie),
        );
        firstRequests.push({ node: floor.server.name, database, tableRows, cold, machineLoad, otherLoad, busiest });
      }
    }
  }
  say(`setup: the first requests of ${thousandsOf(settings.firstRequests)} new sessions timed one at a time on ${firstRequests.length} servers (the nodes and the miss floors)`);

  const groups: ScenarioName[][] = [
    ['forward-auth-1w', 'forward-auth-2w', ...(postgresSkipped ? [] : (['forward-auth-pg'] as const))],
    ...(postgresSkipped ? [] : [['proxy-sqlite', 'proxy-pg'] as ScenarioName[]]),
    ['forward-auth-100k', 'forward-auth-100k-1m', 'miss-floor-100k', ...(postgresSkipped ? [] : (['forward-auth-100k-pg', 'forward-auth-100k-1m-pg', 'miss-floor-100k-pg'] as const))],
  ];
  return {
    scenarios,
    groups,
    servers,
    postgres: !postgresSkipped,
    ...(postgresSkipped ? { postgresSkipped } : {}),
    firstRequests,
    startReviews: startReviewTimes,
    ...(propagation ? { propagation } : {}),
    seeding,
    stop,
  };
}

/** A copy of a database (as a template): retried while the backends of its last connections are still ending. */
async function copyOf(server: TestPostgres, template: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await server.createDatabase(template);
    } catch (error) {
      if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * One request at a time on one kept-alive connection: the first forward-auth check of each of `fresh`
 * sessions (none of them requested before: a cache miss, the session read from the database), then as
 * many checks of one session that is cached. The `untimed` sessions go first, the same way, not timed. Milliseconds from sending to the whole answer.
 */
async function oneAtATime(node: RunningGatehouse, untimed: readonly string[], fresh: readonly string[], warmCookie: string): Promise<{ cold: Latency; warm: Latency }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = (cookie: string) => ({
    host: `127.0.0.1:${node.port}`,
    'x-forwarded-proto': 'http',
    'x-forwarded-host': node.appHost,
    'x-forwarded-uri': '/some/path',
    'x-forwarded-method': 'GET',
    cookie,
  });
  const time = async (cookie: string) => {
    const started = performance.now();
    const status = await get(agent, node.port, `/.gatehouse/auth/${node.appId}`, headers(cookie));
    const took = performance.now() - started;
    if (status !== 200) throw new Error(`${node.server.name}: a forward-auth check answered ${status}`);
    return took;
  };
  try {
    // The connection, first requests and the warm session first, not timed.
    for (const token of untimed) await time(`gatehouse_app=${token}`);
    for (let i = 0; i < 50; i++) await time(warmCookie);
    const cold: number[] = [];
    for (const token of fresh) cold.push(await time(`gatehouse_app=${token}`));
    const warm: number[] = [];
    for (let i = 0; i < fresh.length; i++) warm.push(await time(warmCookie));
    return { cold: latency(cold), warm: latency(warm) };
  } finally {
    agent.destroy();
  }
}

/**
 * Waits until the machine is quiet (under a quarter of a CPU busy over a second), at most 3 minutes,
 * after asking the kernel to write out what the seeding left in its cache (`sync`, a few GB): the
 * timings below are of requests alone.
 */
async function quietMachine(): Promise<{ waited: number; load: number }> {
  const started = performance.now();
  try {
    execFileSync('sync', { stdio: 'ignore', timeout: 180_000 });
  } catch {
    // Not there, or slow: the wait below still applies.
  }
  let load = Number.NaN;
  while (performance.now() - started < 180_000) {
    const before = machineBusySeconds();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = machineBusySeconds();
    if (before === undefined || after === undefined) break;
    load = after - before;
    if (load < 0.25) break;
  }
  return { waited: (performance.now() - started) / 1000, load };
}

/**
 * The machine's busy CPUs, on average, while `timed` ran (all processes: /proc/stat), and what of that
 * was neither this process (the client) nor the server timed. One request at a time keeps about one CPU
 * busy between the client and the server; the rest says something else ran beside the timing (it moves
 * the p99s).
 */
async function withMachineLoad<T extends object>(
  server: ServerProcess,
  timed: () => Promise<T>,
): Promise<T & { machineLoad: number | undefined; otherLoad: number | undefined; busiest: string | undefined }> {
  const processesBefore = everyProcessCpu();
  const busyBefore = machineBusySeconds();
  const serverBefore = cpuSeconds(server.pid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const result = await timed();
  const busyAfter = machineBusySeconds();
  const serverAfter = cpuSeconds(server.pid);
  const client = process.cpuUsage(clientBefore);
  const seconds = (performance.now() - started) / 1000;
  // The processes that used the most CPU meanwhile, other than the client and the server timed.
  const busiest = busiestBetween(processesBefore, everyProcessCpu(), 5)
    .filter(({ pid }) => pid !== process.pid && pid !== server.pid)
    .slice(0, 2)
    .map(({ name, seconds: used }) => `${name} ${(used / seconds).toFixed(2)}`)
    .join('; ');
  if (busyBefore === undefined || busyAfter === undefined) return { ...result, machineLoad: undefined, otherLoad: undefined, busiest };
  const machineLoad = (busyAfter - busyBefore) / seconds;
  const known = (client.user + client.system) / 1e6 + (serverBefore === undefined || serverAfter === undefined ? 0 : serverAfter - serverBefore);
  return { ...result, machineLoad, otherLoad: machineLoad - known / seconds, busiest };
}

function latency(values: readonly number[]): Latency {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

function get(agent: Agent, port: number, pathName: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: pathName, headers, agent, timeout: 10_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`GET 127.0.0.1:${port}${pathName}: no answer within 10 s`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function thousandsOf(value: number): string {
  return value.toLocaleString('en-US');
}
