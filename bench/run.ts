/**
 * Gatehouse's benchmark: the forward-auth check against a bare Fastify handler, and an authenticated
 * proxied request against direct requests to the upstream, in alternating rounds, reported as ratios
 * with CPU time per request; then the same at scale (PostgreSQL, two workers, 100,000 sessions, a
 * million more rows, a revocation across two nodes: lib/scale.ts). See bench/README.md.
 * `npm run build && npm run bench`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { signInToApp } from './lib/browser.js';
import { nginxPath, reportFrontProxies, setUpFrontProxies, type FrontProxiesReport, type FrontProxiesSetup, type ProxyKind } from './lib/frontProxies.js';
import { startGatehouse } from './lib/gatehouse.js';
import { httpGet } from './lib/http.js';
import { measure, problems, type LoadSettings, type Measurement, type Scenario, type ScenarioName } from './lib/load.js';
import { freePort, ProcessGroup, type ServerProcess } from './lib/processes.js';
import { measureInterleaved, reportOperations, setUpOperations, type OperationsReport, type OperationsSetup } from './lib/operations.js';
import { reportScale, type ScaleReport } from './lib/scaleReport.js';
import { setUpScale, type ScaleSetup } from './lib/scale.js';
import { measureSignIns, reportSignIns, setUpSignIns, type SignInMeasurement, type SignInReport, type SignInSettings, type SignInSetup } from './lib/signIns.js';
import { fixed, spread, table, thousands, type Spread } from './lib/stats.js';
import { runOpBench, type OpSettings } from './op.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = path.join(root, 'bench/results/latest.json');

const TARGETS = { forwardAuthRps: 0.9, forwardAuthP99: 1.2, proxyRps: 0.36, proxyRpsAim: 0.45 };

/** A setting the bench cannot run with: said in one line, before anything starts. */
function badSetting(name: string, raw: string, expected: string): never {
  console.error(`bench: ${name}=${raw}: ${expected}`);
  process.exit(2);
}

function envNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) badSetting(name, raw, `not a valid ${integer ? 'whole ' : ''}number`);
  return value;
}

function loadGenerator(raw: string | undefined): 'wrk' | 'autocannon' {
  if (raw === 'autocannon') return raw;
  if (raw === undefined || raw === '' || raw === 'wrk') return 'wrk';
  return badSetting('BENCH_LOAD', raw, 'the load generator is wrk or autocannon');
}

/** True when Debian's caddy can be run (it is not installed here for the bench alone: `npm test` installs it). */
function caddyInstalled(): boolean {
  try {
    execFileSync('caddy', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The proxies forward-auth is measured behind: each one installed by default, both with `1` (a missing one stops the run). */
function frontProxyKinds(): ProxyKind[] {
  if (withFrontProxies === false) return [];
  // Debian's packages (`npm test` installs both).
  const installed = { nginx: nginxPath() !== undefined, caddy: caddyInstalled() };
  const kinds = ['nginx', 'caddy'] as const;
  const missing = kinds.filter((kind) => !installed[kind]);
  if (withFrontProxies === true && missing.length) throw new Error(`BENCH_FORWARD_AUTH_PROXIES=1, but ${missing.join(' and ')} is not installed (Debian: apt-get install ${missing.join(' ')})`);
  return kinds.filter((kind) => installed[kind]);
}

/** True when wrk can be run; installs Debian's package when it is missing and this runs as root. */
function wrkInstalled(): boolean {
  const runs = () => {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' });
      return true;
    } catch (error) {
      // wrk --version prints its version and exits 1: only a missing program is a failure.
      return (error as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  };
  if (runs()) return true;
  if (process.getuid?.() !== 0) return false;
  say('Installing wrk from Debian');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'wrk'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch {
    return false;
  }
  return runs();
}

const rounds = envNumber('BENCH_ROUNDS', 5, true) || 1;
const settings: LoadSettings = {
  generator: loadGenerator(process.env.BENCH_LOAD),
  wrkThreads: envNumber('BENCH_WRK_THREADS', 1, true) || 1,
  connections: envNumber('BENCH_CONNECTIONS', 50, true) || 1,
  pipelining: 1,
  warmup: envNumber('BENCH_WARMUP', 2, false),
  duration: envNumber('BENCH_DURATION', 5, false) || 1,
};
/**
 * An on/off setting: `1` on, `0` off, unset (or empty) the default. Anything else is refused rather than
 * guessed at: `BENCH_CADDY=false` must not turn Caddy on.
 */
function envSwitch<D>(name: string, fallback: D): boolean | D {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1') return true;
  if (raw === '0') return false;
  return badSetting(name, raw, 'use 1 (on) or 0 (off)');
}

/** The plain node:http + undici proxy (no Gatehouse) in the proxy group: the floor Gatehouse's proxy stands on. */
const withPlainProxy = envSwitch('BENCH_PLAIN_PROXY', true);
/** A plain `@fastify/http-proxy` (Fastify 5 + @fastify/reply-from, defaults) in the proxy group: the issue's yardstick. */
const withFastifyProxy = envSwitch('BENCH_FASTIFY_PROXY', true);
/** Caddy's unauthenticated `reverse_proxy` (Debian's caddy) in the proxy group: the issue's other yardstick; by default when installed. */
const withCaddy = envSwitch('BENCH_CADDY', 'when installed' as const);
/** The two groups the targets are about (bare / forward-auth, direct / proxy and the reference proxies); `0` measures only the scale groups. */
const withBase = envSwitch('BENCH_BASE', true);
/** The measurements at scale (bench/lib/scale.ts): PostgreSQL, two workers, many sessions, a million rows, propagation. */
const withScale = envSwitch('BENCH_SCALE', true);
/** The hot paths with metrics on and with the access log on, beside both off (bench/lib/operations.ts). */
const withOperations = envSwitch('BENCH_OPERATIONS', true);
/** A 10 kB page through the proxy without and with compression (proxy/compression.ts). */
const withCompression = envSwitch('BENCH_COMPRESSION', true);
/**
 * Forward-auth behind Debian's nginx (auth_request) and Caddy (forward_auth), configured from docs/deploy/,
 * asking Gatehouse and asking a bare handler (bench/lib/frontProxies.ts): by default each one installed.
 */
const withFrontProxies = envSwitch('BENCH_FORWARD_AUTH_PROXIES', 'when installed' as const);
/** Sign-ins through the whole flow, several browsers at once (bench/lib/signIns.ts). */
const withSignIns = envSwitch('BENCH_SIGNINS', true);
const signInBrowsers = envNumber('BENCH_SIGNIN_BROWSERS', 8, true) || 1;
/** How many 1-second slices the operations nodes are measured in, in turn (bench/lib/operations.ts). */
const operationsSlices = envNumber('BENCH_OPERATIONS_SLICES', 15, true) || 1;
/** PostgreSQL in the scale measurements: by default when installed. */
const withPostgres = envSwitch('BENCH_POSTGRES', 'when installed' as const);
/** Rounds of the scale groups: the first this many of the rounds (all of them when larger). */
const scaleRounds = Math.min(rounds, envNumber('BENCH_SCALE_ROUNDS', 3, true) || 1);
const scaleSettings = {
  sessions: envNumber('BENCH_SCALE_SESSIONS', 100_000, true) || 1,
  filler: envNumber('BENCH_SCALE_FILLER', 1_000_000, true),
  propagationSamples: envNumber('BENCH_PROPAGATION', 200, true),
  firstRequests: envNumber('BENCH_FIRST_REQUESTS', 1_000, true) || 1,
  postgres: withPostgres,
};
/** Gatehouse writes a V8 CPU profile of its whole run (setup included) into bench/results/profiles/ as it stops. */
const profileDir = process.env.BENCH_PROFILE ? path.join(root, 'bench/results/profiles') : undefined;

const processes = new ProcessGroup();
let workDir: string | undefined;
let cleaning: Promise<void> | undefined;
let scale: ScaleSetup | undefined;
let frontProxies: FrontProxiesSetup | undefined;
/** Folders the run made outside the work folder (nginx's and Caddy's), removed with it. */
const folders: string[] = [];

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await processes.stopAll();
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
    // PostgreSQL last: the nodes on it stop first.
    await scale?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  })();
  return cleaning;
}

process.on('exit', () => processes.killAllNow());
// Every signal is handled, not only the first: Ctrl-C reaches this process twice (from the terminal, and
// relayed by tsx), and an unhandled second one would end it at once, leaving the servers running.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping the servers`);
    void cleanup().finally(() => process.exit(130));
  });
}

const say = (line = '') => console.log(line);

async function main(): Promise<number> {
  const started = Date.now();
  const loadAtStart = loadavg();
  say(`Gatehouse benchmark: ${rounds} rounds, ${settings.duration} s per measurement after ${settings.warmup} s of warm-up, ${settings.connections} connections, pipelining ${settings.pipelining}`);
  say(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);
  if (settings.generator === 'wrk' && !wrkInstalled()) {
    settings.generator = 'autocannon';
    say('wrk is not installed (Debian: apt-get install wrk) and could not be installed here: measuring with autocannon instead, whose');
    say('JavaScript response parser competes with the servers for the CPUs (see bench/README.md, "The load generator").');
  }
  say(
    settings.generator === 'wrk'
      ? `The load generator (wrk, ${settings.wrkThreads} thread${settings.wrkThreads === 1 ? '' : 's'}, a child process) shares the CPUs with the servers under test.`
      : 'The load generator (autocannon, in this process) shares the CPUs with the servers under test.',
  );
  say();

  // ---- setup: every server in its own process
  workDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-'));
  const upstream = processes.start('upstream', [path.join(root, 'bench/upstream.mjs')], { cwd: root });
  const upstreamPort = await listeningPort(upstream);
  const references: ReferenceProxy[] = [];
  if (withPlainProxy) {
    const server = processes.start('plain-proxy', [path.join(root, 'bench/plain-proxy.mjs'), `http://127.0.0.1:${upstreamPort}`], { cwd: root });
    references.push({ scenario: 'plain-proxy', key: 'plainProxy', label: 'plain proxy', rpsNote: '(reference)', server, port: await listeningPort(server), upstream });
  }
  if (withFastifyProxy) {
    const server = processes.start('fastify-proxy', [path.join(root, 'bench/fastify-proxy.mjs'), `http://127.0.0.1:${upstreamPort}`], { cwd: root });
    references.push({ scenario: 'fastify-proxy', key: 'fastifyProxy', label: '@fastify/http-proxy', rpsNote: '(reference)', issueRatio: 0.29, server, port: await listeningPort(server), upstream });
  }
  const measureCaddy = withCaddy === true || (withCaddy === 'when installed' && caddyInstalled());
  if (measureCaddy) {
    // Caddy gets an upstream process of its own: sharing one made "direct" 35 % slower in every round
    // (bench/README.md, "Caddy, measured here").
    const caddyUpstream = processes.start('caddy-upstream', [path.join(root, 'bench/upstream.mjs')], { cwd: root });
    const { server, port } = await startCaddy(await listeningPort(caddyUpstream));
    references.push({ scenario: 'caddy-proxy', key: 'caddyProxy', label: 'Caddy', rpsNote: '(reference, both cores)', issueRatio: 0.36, server, port, upstream: caddyUpstream });
  }
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const gatehouse = await startGatehouse(processes, { root, workDir, upstreamPort, nodeArgs });

  const signIn = await signInToApp({ appOrigin: gatehouse.appOrigin, portalOrigin: gatehouse.portalOrigin, providerId: gatehouse.providerId, login: 'alice@example.com', password: 'alice' });
  const cookie = `${signIn.cookieName}=${signIn.token}`;
  const forwardAuthHeaders = { 'x-forwarded-proto': 'http', 'x-forwarded-host': gatehouse.appHost, 'x-forwarded-uri': '/some/path', 'x-forwarded-method': 'GET', cookie };
  // The second baseline answers exactly what Gatehouse's forward-auth answers, without the check.
  const answer = await httpGet({ port: gatehouse.port, path: `/.gatehouse/auth/${gatehouse.appId}`, headers: { host: `127.0.0.1:${gatehouse.port}`, ...forwardAuthHeaders } });
  const identity = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith('x-gatehouse-') || name === 'cache-control'));
  const bare = processes.start('bare', [path.join(root, 'bench/bare.mjs'), JSON.stringify(identity)], { cwd: root });
  const barePort = await listeningPort(bare);
  if (withPlainProxy) {
    // The plain proxy again, adding to each request the headers Gatehouse adds to the same request
    // (forwarding and identity, with the assertion): the floor of a proxy that carries them.
    const added = {
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': gatehouse.appHost,
      'x-real-ip': '127.0.0.1',
      ...Object.fromEntries(Object.entries(identity).filter(([name]) => name.startsWith('x-gatehouse-'))),
    };
    const server = processes.start('plain-proxy-identity', [path.join(root, 'bench/plain-proxy.mjs'), `http://127.0.0.1:${upstreamPort}`, JSON.stringify(added)], { cwd: root });
    references.push({
      scenario: 'plain-proxy-identity',
      key: 'plainProxyIdentity',
      label: 'plain proxy + headers',
      rpsNote: '(reference)',
      about: "node:http + undici sending Gatehouse's headers, no check",
      againstProxy: true,
      server,
      port: await listeningPort(server),
      upstream,
    });
  }
  say(`setup: upstream :${upstreamPort}, bare Fastify :${barePort}, Gatehouse :${gatehouse.port} (pid ${gatehouse.server.pid}) with the development IdP${references.map(({ label, port }) => `, ${label} :${port}`).join('')}`);
  say(`setup: signed in as alice@example.com in ${signIn.trail.length} requests (app → portal → IdP login form → callback → app); ${signIn.cookieName} cookie for ${gatehouse.appHost}`);

  const scenarios = new Map<ScenarioName, Scenario>([
    // Each baseline is sent the very request its subject gets: only the server differs.
    ['bare', { name: 'bare', url: `http://127.0.0.1:${barePort}/`, headers: forwardAuthHeaders, server: bare }],
    ['bare-identity', { name: 'bare-identity', url: `http://127.0.0.1:${barePort}/identity`, headers: forwardAuthHeaders, server: bare }],
    ['forward-auth', { name: 'forward-auth', url: `http://127.0.0.1:${gatehouse.port}/.gatehouse/auth/${gatehouse.appId}`, headers: forwardAuthHeaders, server: gatehouse.server }],
    ['direct', { name: 'direct', url: `http://127.0.0.1:${upstreamPort}/some/path`, headers: { cookie }, server: upstream }],
    ['proxy', { name: 'proxy', url: `http://127.0.0.1:${gatehouse.port}/some/path`, headers: { host: gatehouse.appHost, cookie }, server: gatehouse.server, helpers: [upstream] }],
    // The same 10 kB page through the proxy, as a client that does not and one that does take compression.
    ['proxy-page', { name: 'proxy-page', url: `http://127.0.0.1:${gatehouse.port}/page`, headers: { host: gatehouse.appHost, cookie }, server: gatehouse.server, helpers: [upstream] }],
    [
      'proxy-page-compressed',
      // As a browser asks from the app's own page: only those answers are compressed (proxy/compression.ts, BREACH).
      { name: 'proxy-page-compressed', url: `http://127.0.0.1:${gatehouse.port}/page`, headers: { host: gatehouse.appHost, cookie, 'accept-encoding': 'gzip, deflate, br', 'sec-fetch-site': 'same-origin' }, server: gatehouse.server, helpers: [upstream] },
    ],
  ]);
  for (const { scenario, port, server, upstream: behind } of references) {
    scenarios.set(scenario, { name: scenario, url: `http://127.0.0.1:${port}/some/path`, headers: { cookie }, server, helpers: [behind] });
  }
  if (withScale) {
    scale = await setUpScale({
      processes,
      root,
      workDir,
      upstreamPort,
      upstream,
      main: gatehouse,
      forwardAuthHeaders,
      proxyHeaders: { host: gatehouse.appHost, cookie },
      settings: scaleSettings,
      say,
      nodeArgs,
    });
    if (scale.postgresSkipped) say(`setup: PostgreSQL left out: ${scale.postgresSkipped}`);
    for (const scenario of scale.scenarios) scenarios.set(scenario.name, scenario);
  }
  let operations: OperationsSetup | undefined;
  if (withOperations) {
    operations = await setUpOperations({ processes, root, workDir, upstreamPort, nodeArgs, forwardAuthHeaders });
    for (const scenario of operations.scenarios) scenarios.set(scenario.name, scenario);
    say('setup: two more nodes like the first, one with metrics on (scraped every second while measured), one with the access log on (to a file)');
  }
  const proxyKinds = frontProxyKinds();
  if (proxyKinds.length) {
    frontProxies = await setUpFrontProxies({ processes, root, workDir, kinds: proxyKinds, nodeArgs, folders });
    for (const scenario of frontProxies.scenarios) scenarios.set(scenario.name, scenario);
    say(
      `setup: ${frontProxies.proxies.map(({ label }) => label).join(' and ')} from docs/deploy/, each in front of a Gatehouse of its own (:${frontProxies.node.port}) and of a bare handler sending its answer; alice signed in through each; the upstream receives her identity through both`,
    );
  } else if (withFrontProxies === 'when installed') say('setup: neither nginx nor caddy is installed: forward-auth behind them left out');
  let signIns: SignInSetup | undefined;
  const signInSettings: SignInSettings = { browsers: signInBrowsers, seconds: settings.duration, warmup: settings.warmup };
  if (withSignIns) {
    signIns = await setUpSignIns({ processes, root, workDir, upstreamPort, nodeArgs });
    say(`setup: a Gatehouse for sign-ins :${signIns.node.port} (pid ${signIns.node.server.pid}, its development IdP pid ${signIns.idpPid}), SQLite, the sign-in rate limit out of reach`);
  }
  await verify([...scenarios.values()]);
  say('setup: every scenario answers as expected (forward-auth 200 with alice\'s identity, proxy 200 "ok")');
  say();

  // ---- measurements: the pairs back to back, their order flipped every other round
  const baseGroups: ScenarioName[][] = withBase
    ? [
        ['bare', 'bare-identity', 'forward-auth'],
        ['direct', 'proxy', ...references.map((reference) => reference.scenario)],
        ...(withCompression ? [['proxy-page', 'proxy-page-compressed'] as ScenarioName[]] : []),
      ]
    : [];
  const measurements: Measurement[] = [];
  const signInMeasurements: SignInMeasurement[] = [];
  const orders: string[] = [];
  const everyServer = [
    ...new Set([
      gatehouse.server,
      upstream,
      bare,
      ...references.flatMap((reference) => [reference.server, reference.upstream]),
      ...(scale?.servers ?? []),
      ...(operations?.servers ?? []),
      ...(frontProxies?.servers ?? []),
      ...(signIns?.servers ?? []),
    ]),
  ];
  const checkServers = () => {
    for (const server of everyServer) {
      if (!server.running) throw new Error(`${server.name} stopped during the run:\n${server.tail()}`);
    }
  };
  for (let round = 1; round <= rounds; round++) {
    const groups = [...baseGroups, ...(frontProxies?.groups ?? []), ...(scale && round <= scaleRounds ? scale.groups : [])];
    const order = groups.flatMap((group) => (round % 2 === 0 ? [...group].reverse() : group));
    orders.push([...order, ...(signIns ? ['sign-ins'] : [])].join(' → '));
    for (const name of order) {
      const run = () => measure(scenarios.get(name)!, round, settings);
      const m = await run();
      measurements.push(m);
      checkServers();
      const issue = problems(m);
      say(
        `round ${round}/${rounds}  ${name.padEnd(scale ? 23 : 12)} ${thousands(m.rps).padStart(7)} req/s  p50 ${fixed(m.latency.p50, 2).padStart(6)} ms  p99 ${fixed(m.latency.p99, 2).padStart(6)} ms  ` +
          `server CPU ${fixed(m.cpu.server, 1).padStart(6)} µs/req  other load ${fixed(m.otherLoad, 2)} CPUs${issue ? `  INVALID: ${issue}` : ''}`,
      );
    }
    if (signIns) {
      const m = await measureSignIns(signIns, round, signInSettings);
      signInMeasurements.push(m);
      checkServers();
      say(
        `round ${round}/${rounds}  ${'sign-ins'.padEnd(scale ? 23 : 12)} ${fixed(m.perSecond, 1).padStart(7)} /s     p50 ${fixed(m.latency.p50, 1).padStart(6)} ms  p99 ${fixed(m.latency.p99, 1).padStart(6)} ms  ` +
          `Gatehouse CPU ${fixed(m.cpu.gatehouse, 2)} ms, IdP ${fixed(m.cpu.idp, 2)} ms per sign-in  other load ${fixed(m.otherLoad, 2)} CPUs${m.failures ? `  INVALID: ${m.failures} failed` : ''}`,
      );
    }
  }
  // ---- operations: their own interleaved slices, once the rounds have warmed every node
  const operationsMeasurements = operations ? await measureInterleaved(operations, scenarios, settings, operationsSlices) : [];
  say();

  // ---- report
  const of = (name: ScenarioName, round: number) => measurements.find((m) => m.scenario === name && m.round === round);
  const names = [...new Set(measurements.map((m) => m.scenario))];
  const scenarioSummary = Object.fromEntries(
    names.map((name) => {
      const ms = measurements.filter((m) => m.scenario === name);
      const scenario = scenarios.get(name)!;
      const helpers = [...(scenario.helpers ?? []), ...(scenario.helperGroups ?? [])].map((helper) => helper.name);
      return [
        name,
        {
          rps: spread(ms.map((m) => m.rps)),
          p50: spread(ms.map((m) => m.latency.p50)),
          p99: spread(ms.map((m) => m.latency.p99)),
          serverCpuUsPerRequest: spread(ms.map((m) => m.cpu.server ?? Number.NaN)),
          helperCpuUsPerRequest: Object.fromEntries(helpers.map((helper) => [helper, spread(ms.map((m) => m.cpu.helpers[helper] ?? Number.NaN))])),
          loadGeneratorCpuUsPerRequest: spread(ms.map((m) => m.cpu.loadGenerator)),
        },
      ];
    }),
  ) as Record<string, { rps: Spread; p50: Spread; p99: Spread; serverCpuUsPerRequest: Spread; helperCpuUsPerRequest: Record<string, Spread>; loadGeneratorCpuUsPerRequest: Spread }>;
  const otherLoad = spread(measurements.map((m) => m.otherLoad ?? Number.NaN));
  const invalid = [
    ...measurements.map((m) => [m, `round ${m.round}`] as const),
    ...operationsMeasurements.map((m) => [m, `operations slice ${m.round}`] as const),
  ].flatMap(([m, when]) => {
    const issue = problems(m);
    return issue ? [`${m.scenario} in ${when}: ${issue}`] : [];
  });
  for (const m of signInMeasurements) if (m.failures) invalid.push(`sign-ins in round ${m.round}: ${m.failures} failed (the first: ${m.firstFailure ?? ''})`);
  const base = withBase ? reportBase() : undefined;
  if (!withBase) {
    for (const problem of invalid) say(`INVALID: ${problem}`);
    sayOtherLoad();
  }
  if (scale && withBase) say();
  const compression = withBase && withCompression ? reportCompression() : undefined;
  if (operations) say();
  const operationsReport: OperationsReport | undefined = operations ? reportOperations(operations, operationsMeasurements, operationsSlices, say) : undefined;
  if (frontProxies) say();
  const frontProxiesReport: FrontProxiesReport | undefined = frontProxies ? reportFrontProxies(frontProxies, measurements, rounds, invalid.length > 0, say) : undefined;
  if (signIns) say();
  const signInReport: SignInReport | undefined = signIns ? reportSignIns(signInMeasurements, signInSettings, invalid.length > 0, say) : undefined;
  if (scale && (frontProxies || signIns)) say();
  const scaleReport: ScaleReport | undefined = scale ? reportScale({ scale, measurements, scenarioSummary, scaleRounds, invalid: invalid.length > 0, say }) : undefined;

  await mkdir(path.dirname(resultsFile), { recursive: true });
  const results = {
    date: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    commit: gitCommit(),
    node: process.version,
    cpus: { count: cpus().length, model: cpus()[0]?.model.trim() },
    loadAverage: { start: loadAtStart, end: loadavg() },
    settings: {
      rounds,
      ...settings,
      plainProxy: withPlainProxy,
      fastifyProxy: withFastifyProxy,
      caddy: measureCaddy,
      base: withBase,
      operations: withOperations && { slices: operationsSlices },
      forwardAuthProxies: proxyKinds,
      signIns: withSignIns && { browsers: signInBrowsers, seconds: signInSettings.seconds, warmup: signInSettings.warmup },
      scale: withScale ? { rounds: scaleRounds, ...scaleSettings } : false,
    },
    otherLoad,
    valid: invalid.length === 0,
    problems: invalid,
    targets: [...(base?.targets ?? []), ...(frontProxiesReport?.targets ?? []), ...(signInReport ? [signInReport.target] : []), ...(scaleReport?.targets ?? [])].map(({ name, value, target, pass, ...rest }) => ({ name, value, target, pass, ...('floorMisses' in rest ? { floorMisses: rest.floorMisses } : {}) })),
    ratios: base?.ratios ?? {},
    forwardAuthProxies: frontProxiesReport,
    signIns: signInReport,
    scale: scaleReport,
    compression,
    operations: operationsReport && { ...operationsReport, slices: operationsSlices, measurements: operationsMeasurements },
    scenarios: scenarioSummary,
    rounds: base?.perRound.map(({ references: referenceRound, ...round }) => ({ ...round, ...referenceRound })) ?? [],
    measurements,
  };
  await writeFile(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  say(`\nfull results: ${path.relative(process.cwd(), resultsFile)} (${results.seconds} s)`);
  if (profileDir) say(`Gatehouse's CPU profile: ${path.relative(process.cwd(), profileDir)}/ (written as it stops; open it in Chrome DevTools)`);
  return invalid.length ? 1 : 0;

  function sayOtherLoad(): void {
    say(`Other load on the machine during the measurements: median ${fixed(otherLoad.median, 2)} CPUs [${fixed(otherLoad.min, 2)}–${fixed(otherLoad.max, 2)}] of ${cpus().length}.`);
    if (otherLoad.median > 0.25) say('That is a busy machine: the req/s and p99 ratios swing with it; CPU per request, and its ratio, much less.');
  }

  /** The two groups' report, as before the scale measurements: the rounds, the medians, the ratios, the targets. */
  /** The page compressed / as it came, per round: what a client receives, and what it costs the proxy. */
  function reportCompression() {
    const perRound = (pick: (m: Measurement) => number | undefined) =>
      spread(
        Array.from({ length: rounds }, (_, index) => {
          const [on, off] = [of('proxy-page-compressed', index + 1), of('proxy-page', index + 1)];
          const [x, y] = [on && pick(on), off && pick(off)];
          return x === undefined || y === undefined || y === 0 ? Number.NaN : x / y;
        }),
      );
    const bytes = (name: ScenarioName) => spread(measurements.filter((m) => m.scenario === name).map((m) => m.bytesPerAnswer ?? Number.NaN)).median;
    const result = {
      bytesPerAnswer: { plain: bytes('proxy-page'), compressed: bytes('proxy-page-compressed') },
      rps: perRound((m) => m.rps),
      cpu: perRound((m) => m.cpu.server),
    };
    say();
    say(`compression: a 10 kB HTML page through the proxy, compressed (brotli) / as it came, median over ${rounds} rounds`);
    say(
      table(
        ['ratio', 'median', 'min–max'],
        [
          ['bytes per answer', fixed(result.bytesPerAnswer.compressed / result.bytesPerAnswer.plain, 3), `${thousands(result.bytesPerAnswer.compressed)} / ${thousands(result.bytesPerAnswer.plain)} bytes`],
          ['req/s', fixed(result.rps.median, 3), `${fixed(result.rps.min, 3)}–${fixed(result.rps.max, 3)}`],
          ['server CPU/req', fixed(result.cpu.median, 3), `${fixed(result.cpu.min, 3)}–${fixed(result.cpu.max, 3)}`],
        ],
      ),
    );
    return result;
  }

  function reportBase() {
    const perRound = Array.from({ length: rounds }, (_, index) => {
      const round = index + 1;
      const [b, bi, f, d, p] = (['bare', 'bare-identity', 'forward-auth', 'direct', 'proxy'] as const).map((name) => of(name, round));
      return {
        round,
        order: orders[index]!,
        forwardAuthRps: ratio(f?.rps, b?.rps),
        forwardAuthP99: ratio(f?.latency.p99, b?.latency.p99),
        forwardAuthCpu: ratio(f?.cpu.server, b?.cpu.server),
        sameAnswerRps: ratio(f?.rps, bi?.rps),
        sameAnswerP99: ratio(f?.latency.p99, bi?.latency.p99),
        sameAnswerCpu: ratio(f?.cpu.server, bi?.cpu.server),
        identityAnswerRps: ratio(bi?.rps, b?.rps),
        proxyRps: ratio(p?.rps, d?.rps),
        proxyP99: ratio(p?.latency.p99, d?.latency.p99),
        proxyCpu: ratio(p?.cpu.server, d?.cpu.server),
        // Each reference proxy against direct (`<key>Rps`, `<key>Cpu`), and Gatehouse's proxy against it (`proxyOver<Key>Rps`).
        references: Object.fromEntries(
          references.flatMap(({ scenario, key }) => {
            const r = of(scenario, round);
            return [
              [`${key}Rps`, ratio(r?.rps, d?.rps)],
              [`${key}Cpu`, ratio(r?.cpu.server, d?.cpu.server)],
              [proxyOverKey(key), ratio(p?.rps, r?.rps)],
            ];
          }),
        ) as Record<string, number>,
      };
    });
    say(
      table(
        ['round', 'bare req/s', 'fwd-auth req/s', 'ratio', 'bare p99', 'fwd-auth p99', 'ratio', 'direct req/s', 'proxy req/s', 'ratio', ...references.flatMap(({ label }) => [label, 'ratio']), 'order'],
        perRound.map((r) => [
          String(r.round),
          thousands(of('bare', r.round)?.rps),
          thousands(of('forward-auth', r.round)?.rps),
          fixed(r.forwardAuthRps, 2),
          `${fixed(of('bare', r.round)?.latency.p99, 2)} ms`,
          `${fixed(of('forward-auth', r.round)?.latency.p99, 2)} ms`,
          fixed(r.forwardAuthP99, 2),
          thousands(of('direct', r.round)?.rps),
          thousands(of('proxy', r.round)?.rps),
          fixed(r.proxyRps, 2),
          ...references.flatMap(({ scenario, key }) => [thousands(of(scenario, r.round)?.rps), fixed(r.references[`${key}Rps`], 2)]),
          r.order,
        ]),
      ),
    );
    say();

    const baseNames = names.filter((name) => ![...(scale?.scenarios ?? []), ...(frontProxies?.scenarios ?? [])].some((scenario) => scenario.name === name));
    say(`medians over ${rounds} rounds [min–max]`);
    say(
      table(
        ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'upstream CPU µs/req', 'load-gen CPU µs/req'],
        baseNames.map((name) => {
          const s = scenarioSummary[name]!;
          // Each proxy has one upstream process (Caddy its own).
          const upstreamCpu = Object.values(s.helperCpuUsPerRequest)[0];
          return [
            name,
            `${thousands(s.rps.median)} [${thousands(s.rps.min)}–${thousands(s.rps.max)}]`,
            fixed(s.p50.median, 2),
            `${fixed(s.p99.median, 2)} [${fixed(s.p99.min, 2)}–${fixed(s.p99.max, 2)}]`,
            fixed(s.serverCpuUsPerRequest.median, 1),
            upstreamCpu ? fixed(upstreamCpu.median, 1) : '',
            fixed(s.loadGeneratorCpuUsPerRequest.median, 1),
          ];
        }),
      ),
    );
    say('server = the process under test: the bare handler, Gatehouse (not its development IdP), the upstream, the plain proxy, @fastify/http-proxy, or Caddy.');
    say(`upstream = the upstream process while it answers the proxy (Caddy's: an upstream process of its own). load-gen = ${settings.generator === 'wrk' ? 'wrk' : 'this process (autocannon)'}.`);
    sayOtherLoad();
    say();

    const ratios = {
      forwardAuthRps: spread(perRound.map((r) => r.forwardAuthRps)),
      forwardAuthP99: spread(perRound.map((r) => r.forwardAuthP99)),
      forwardAuthCpu: spread(perRound.map((r) => r.forwardAuthCpu)),
      sameAnswerRps: spread(perRound.map((r) => r.sameAnswerRps)),
      sameAnswerP99: spread(perRound.map((r) => r.sameAnswerP99)),
      sameAnswerCpu: spread(perRound.map((r) => r.sameAnswerCpu)),
      identityAnswerRps: spread(perRound.map((r) => r.identityAnswerRps)),
      proxyRps: spread(perRound.map((r) => r.proxyRps)),
      proxyP99: spread(perRound.map((r) => r.proxyP99)),
      proxyCpu: spread(perRound.map((r) => r.proxyCpu)),
    };
    const referenceRatios: Record<string, Spread> = Object.fromEntries(
      Object.keys(perRound[0]?.references ?? {}).map((name) => [name, spread(perRound.map((r) => r.references[name] ?? Number.NaN))]),
    );
    const ratioRow = (label: string, s: Spread | undefined, target = '') => [label, fixed(s?.median, 2), `${fixed(s?.min, 2)}–${fixed(s?.max, 2)}`, target];
    say(`ratios, computed per round, median over ${rounds} rounds`);
    say(
      table(
        ['ratio', 'median', 'min–max', 'target'],
        [
          ratioRow('forward-auth / bare  req/s', ratios.forwardAuthRps, `≥ ${TARGETS.forwardAuthRps.toFixed(2)}`),
          ratioRow('forward-auth / bare  p99', ratios.forwardAuthP99, `≤ ${TARGETS.forwardAuthP99.toFixed(2)}`),
          ratioRow('forward-auth / bare  CPU/req', ratios.forwardAuthCpu),
          ratioRow('forward-auth / bare-identity  req/s', ratios.sameAnswerRps, '(the same answer without the check)'),
          ratioRow('forward-auth / bare-identity  p99', ratios.sameAnswerP99, '(the same answer without the check)'),
          ratioRow('forward-auth / bare-identity  CPU/req', ratios.sameAnswerCpu, '(the same answer without the check)'),
          ratioRow('bare-identity / bare  req/s', ratios.identityAnswerRps, '(the answer alone, no check)'),
          ratioRow('proxy / direct       req/s', ratios.proxyRps, `≥ ${TARGETS.proxyRps.toFixed(2)} (aim ${TARGETS.proxyRpsAim.toFixed(2)})`),
          ratioRow('proxy / direct       p99', ratios.proxyP99),
          ratioRow('proxy / direct       CPU/req', ratios.proxyCpu, '(Gatehouse vs the upstream alone)'),
          ...references.flatMap(({ key, label, rpsNote }) => [
            ratioRow(`${`${label} / direct`.padEnd(20)} req/s`, referenceRatios[`${key}Rps`], rpsNote),
            ratioRow(`${`${label} / direct`.padEnd(20)} CPU/req`, referenceRatios[`${key}Cpu`], '(reference)'),
          ]),
          // The issue placed two of the references on its own scale: Gatehouse's proxy against them here.
          ...references.flatMap(({ key, label, issueRatio, againstProxy }) =>
            issueRatio === undefined
              ? againstProxy
                ? [ratioRow(`proxy / ${label}  req/s`, referenceRatios[proxyOverKey(key)], '(the same headers upstream, no check)')]
                : []
              : [
                  ratioRow(
                    `proxy / ${label}  req/s`,
                    referenceRatios[proxyOverKey(key)],
                    `(issue's scale: ${TARGETS.proxyRps.toFixed(2)} / ${issueRatio.toFixed(2)} = ${(TARGETS.proxyRps / issueRatio).toFixed(2)}, aim ${(TARGETS.proxyRpsAim / issueRatio).toFixed(2)})`,
                  ),
                ],
          ),
        ],
      ),
    );
    say();

    const targets = [
      { name: 'forward-auth rps ratio', value: ratios.forwardAuthRps.median, target: `≥ ${TARGETS.forwardAuthRps.toFixed(2)}`, pass: ratios.forwardAuthRps.median >= TARGETS.forwardAuthRps, note: '' },
      { name: 'forward-auth p99 ratio', value: ratios.forwardAuthP99.median, target: `≤ ${TARGETS.forwardAuthP99.toFixed(2)}`, pass: ratios.forwardAuthP99.median <= TARGETS.forwardAuthP99, note: '' },
      {
        name: 'proxy rps ratio',
        value: ratios.proxyRps.median,
        target: `≥ ${TARGETS.proxyRps.toFixed(2)}, aim ${TARGETS.proxyRpsAim.toFixed(2)}`,
        pass: ratios.proxyRps.median >= TARGETS.proxyRps,
        note: ratios.proxyRps.median >= TARGETS.proxyRpsAim ? ' (aim reached)' : '',
      },
    ];
    for (const problem of invalid) say(`INVALID: ${problem}`);
    for (const t of targets) {
      // 0.897 against ≥ 0.90 would read "0.90 … MISS": a third decimal says why.
      const shown = t.target.includes(fixed(t.value, 2)) ? fixed(t.value, 3) : fixed(t.value, 2);
      say(`${t.name} ${shown} (target ${t.target}) ${invalid.length ? 'INVALID RUN' : t.pass ? `PASS${t.note}` : 'MISS'}`);
    }
    // What each target stands next to in this very run: the same work with nothing of Gatehouse's in it,
    // and the issue's own yardsticks.
    say(`  beside the forward-auth targets: the bare handler sending forward-auth's answer with no check at all, ${fixed(ratios.identityAnswerRps.median, 2)} × the bare handler's req/s`);
    if (references.length) {
      const beside = references.map(({ key, label, issueRatio, about }) => {
        const measured = `${label} ${fixed(referenceRatios[`${key}Rps`]?.median, 2)}`;
        return issueRatio === undefined ? `${measured} (${about ?? 'node:http + undici, no check'})` : `${measured} (the issue's figure ${issueRatio.toFixed(2)})`;
      });
      say(`  beside the proxy target, × direct: ${beside.join('; ')}`);
    }
    return { targets, ratios: { ...ratios, ...referenceRatios }, perRound };
  }
}

/** The results key of Gatehouse's proxy over a reference: `proxyOver<Key>Rps`. */
function proxyOverKey(key: string): string {
  return `proxyOver${key[0]!.toUpperCase()}${key.slice(1)}Rps`;
}

function ratio(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined || b === 0 ? Number.NaN : a / b;
}

/** A proxy measured beside Gatehouse's for scale, never a target: the plain node:http + undici floor, @fastify/http-proxy, or Caddy. */
interface ReferenceProxy {
  scenario: ScenarioName;
  /** Its ratios' names in the results: `<key>Rps`, `<key>Cpu`. */
  key: string;
  /** How the tables name it. */
  label: string;
  /** What its req/s ratio row says in the target column. */
  rpsNote: string;
  /** Its ratio to direct as the issue measured it elsewhere, when the issue gave one (Caddy 0.36, @fastify/http-proxy 0.29). */
  issueRatio?: number;
  /** What it is, beside the proxy target (default: node:http + undici, no check). */
  about?: string;
  /** Gatehouse's proxy is read against it too (a row of its own): the floor of the same work. */
  againstProxy?: boolean;
  server: ServerProcess;
  port: number;
  /** The upstream process behind it. */
  upstream: ServerProcess;
}

/**
 * Caddy's `reverse_proxy` to the upstream, nothing else (no TLS, no admin endpoint, no access log), from
 * Debian's package: the issue's yardstick for the proxy. Its data stays in the run's work folder.
 */
async function startCaddy(upstreamPort: number): Promise<{ server: ServerProcess; port: number }> {
  const dir = path.join(workDir!, 'caddy');
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const config = `{
	admin off
	auto_https off
	storage file_system ${JSON.stringify(path.join(dir, 'data'))}
}

http://127.0.0.1:${port} {
	reverse_proxy 127.0.0.1:${upstreamPort}
}
`;
  await writeFile(path.join(dir, 'Caddyfile'), config);
  const server = processes.start('caddy', ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    cwd: dir,
    command: 'caddy',
    env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data') },
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (!server.running) throw new Error(`caddy exited before it was ready (is Debian's caddy installed?):\n${server.tail()}`);
    const answer = await httpGet({ port, path: '/', headers: { host: `127.0.0.1:${port}` } }).catch(() => undefined);
    if (answer?.status === 200) return { server, port };
    if (Date.now() > deadline) throw new Error(`caddy not ready after 15 s:\n${server.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function listeningPort(server: ServerProcess): Promise<number> {
  const match = await server.waitForOutput(/listening (\d+)/, 15_000);
  return Number(match[1]);
}

/** A check answered with alice's identity headers and an empty body: Gatehouse's forward-auth, or the floor of its miss. */
function isIdentityCheck(name: ScenarioName): boolean {
  return name.startsWith('forward-auth') || name.startsWith('miss-floor');
}

/** Each scenario once, before any load: a benchmark of error answers would measure nothing useful. */
async function verify(scenarios: readonly Scenario[]): Promise<void> {
  for (const scenario of scenarios) {
    const url = new URL(scenario.url);
    const answer = await httpGet({ port: Number(url.port), path: url.pathname, headers: { host: url.host, ...scenario.headers } });
    const fail = (why: string) => {
      throw new Error(`${scenario.name}: ${why} (got ${answer.status}, ${JSON.stringify(answer.headers)}, body ${JSON.stringify(answer.body.slice(0, 300))})`);
    };
    if (answer.status !== 200) fail('expected 200');
    if (scenario.name === 'proxy-page') {
      if (!answer.body.startsWith('<!doctype html>') || answer.headers['content-encoding'] !== undefined) fail('expected the page, uncompressed');
    } else if (scenario.name === 'proxy-page-compressed') {
      if (answer.headers['content-encoding'] !== 'br') fail('expected the page, brotli-compressed');
    } else if (!scenario.name.startsWith('bare') && !isIdentityCheck(scenario.name) && answer.body !== 'ok') fail('expected the body "ok"');
    if (isIdentityCheck(scenario.name) || scenario.name === 'bare-identity') {
      if (answer.headers['x-gatehouse-email'] !== 'alice@example.com') fail('expected X-Gatehouse-Email: alice@example.com');
      if (!answer.headers['x-gatehouse-user'] || !answer.headers['x-gatehouse-assertion']) fail('expected the identity headers');
    }
  }
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/**
 * `BENCH_ONLY=op`: the OpenID Provider's section alone (bench/op.ts), none of the groups above; its own
 * settings are BENCH_OP_*, BENCH_ROUNDS and BENCH_POSTGRES.
 */
async function mainOp(): Promise<number> {
  const opSettings: OpSettings = {
    rounds,
    codes: envNumber('BENCH_OP_CODES', 1_000, true) || 1,
    refreshSeconds: envNumber('BENCH_OP_REFRESH', 5, false) || 1,
    connections: envNumber('BENCH_OP_CONNECTIONS', 16, true) || 1,
    authorizations: envNumber('BENCH_OP_AUTHORIZATIONS', 200, true) || 1,
    postgres: withPostgres,
    backchannelSamples: envNumber('BENCH_OP_BACKCHANNEL', 300, true),
    ...(profileDir ? { profileDir } : {}),
  };
  say(`Gatehouse benchmark, the OpenID Provider only: node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  workDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-op-'));
  const report = await runOpBench({ root, workDir, processes, settings: opSettings, say });
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(resultsFile, `${JSON.stringify({ commit: gitCommit(), at: new Date().toISOString(), node: process.version, op: report }, null, 2)}\n`);
  say(`\nwritten to ${path.relative(root, resultsFile)}`);
  return report.invalid.length > 0 ? 1 : 0;
}

const only = process.env.BENCH_ONLY;
if (only !== undefined && only !== '' && only !== 'op') badSetting('BENCH_ONLY', only, 'the one section that runs alone is op (the OpenID Provider)');

(only === 'op' ? mainOp() : main())
  .catch((error: unknown) => {
    console.error(`\nbenchmark failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  })
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  });
