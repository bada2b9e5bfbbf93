import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { cpuSeconds, endedChildrenCpuSeconds, machineBusySeconds, type ServerProcess } from './processes.js';
import { percentile, Samples } from './stats.js';

const execFileAsync = promisify(execFile);

export type ScenarioName =
  | 'bare'
  | 'bare-identity'
  | 'forward-auth'
  | 'direct'
  | 'proxy'
  | 'plain-proxy'
  | 'plain-proxy-identity'
  | 'fastify-proxy'
  | 'caddy-proxy'
  // Forward-auth behind nginx and Caddy (bench/lib/frontProxies.ts): each proxy asking Gatehouse, and asking a bare handler.
  | 'nginx-auth-request'
  | 'nginx-auth-request-bare'
  | 'caddy-forward-auth'
  | 'caddy-forward-auth-bare'
  // Operations (bench/lib/operations.ts): the same hot paths with metrics on, and with the access log on.
  | 'forward-auth-control'
  | 'proxy-control'
  | 'forward-auth-metrics'
  | 'proxy-metrics'
  | 'forward-auth-access-log'
  | 'proxy-access-log'
  // Compression (run.ts): a 10 kB HTML page through the proxy, asked for without and with Accept-Encoding.
  | 'proxy-page'
  | 'proxy-page-compressed'
  // At scale (bench/lib/scale.ts): PostgreSQL beside SQLite, two workers beside one, many sessions.
  | 'forward-auth-1w'
  | 'forward-auth-2w'
  | 'forward-auth-pg'
  | 'proxy-sqlite'
  | 'proxy-pg'
  | 'forward-auth-100k'
  | 'forward-auth-100k-pg'
  | 'forward-auth-100k-1m'
  | 'forward-auth-100k-1m-pg'
  // The floor of a miss (bench/miss-floor.mjs): the read and the signature alone, on the 100k database.
  | 'miss-floor-100k'
  | 'miss-floor-100k-pg';

export interface Scenario {
  name: ScenarioName;
  url: string;
  headers: Record<string, string>;
  /** The server under test: its CPU time per request is reported. */
  server: ServerProcess;
  /** Other processes that work for each request (the upstream behind the proxy); their CPU is reported apart. */
  helpers?: ServerProcess[];
  /**
   * The processes whose CPU time is the server's, when not the server's one process (a primary and its
   * workers): read when the measured run starts, summed.
   */
  serverPids?: () => number[];
  /**
   * A file of `Cookie` header values, one a line: each request takes the next one, round the list (wrk
   * only, through wrk-rotate.lua), instead of the one cookie in `headers`.
   */
  rotateCookies?: string;
  /**
   * Processes that work for each request and are not one server process of this harness's (PostgreSQL:
   * its server and the backends of Gatehouse's connections), each group's CPU reported apart like a
   * helper's, under its name: `cpuSeconds` reads the group's CPU time so far.
   */
  helperGroups?: Array<{ name: string; cpuSeconds: () => number | undefined }>;
}

export interface LoadSettings {
  /** wrk (C, a child process) or autocannon (JavaScript, in the harness's process). */
  generator: 'wrk' | 'autocannon';
  /** wrk's threads. */
  wrkThreads: number;
  connections: number;
  pipelining: number;
  /** Seconds. */
  warmup: number;
  /** Seconds. */
  duration: number;
}

export interface Measurement {
  scenario: ScenarioName;
  round: number;
  /** Seconds the measured run lasted. */
  seconds: number;
  requests: number;
  rps: number;
  /** Bytes received per answer, headers included (wrk only). */
  bytesPerAnswer?: number;
  /** Milliseconds: wrk's histogram of every answer, or every 2xx answer's own time with autocannon. */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU time per request, in microseconds. */
  cpu: {
    server: number | undefined;
    /** With several server processes (a primary and its workers), each one's share, in the order of `serverPids`. */
    serverParts?: Array<number | undefined>;
    helpers: Record<string, number | undefined>;
    loadGenerator: number;
  };
  /**
   * CPUs' worth of work done meanwhile by everything else on the machine (other jobs, and kernel work
   * charged to no process), averaged over the run: 0.5 means about half a core was taken from the benchmark.
   */
  otherLoad: number | undefined;
}

/** What one load run reports, whichever tool made it. */
interface LoadRun {
  seconds: number;
  requests: number;
  /** Milliseconds. */
  latency: Measurement['latency'];
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU seconds the load generator used. */
  loadCpu: number;
  /** Bytes received, headers included (wrk only). */
  bytes?: number;
}

/** A discarded warm-up run, then the measured run with the processes' CPU time read around it. */
export async function measure(scenario: Scenario, round: number, settings: LoadSettings): Promise<Measurement> {
  const run = settings.generator === 'wrk' ? runWrk : runAutocannon;
  if (settings.warmup > 0) await run(scenario, settings, settings.warmup);

  const helpers = [
    ...(scenario.helpers ?? []).map((helper) => ({ name: helper.name, cpuSeconds: () => cpuSeconds(helper.pid) })),
    ...(scenario.helperGroups ?? []),
  ];
  const serverPids = scenario.serverPids?.() ?? [scenario.server.pid];
  const partsBefore = serverPids.map((pid) => cpuSeconds(pid));
  const serverBefore = cpuOf(serverPids);
  const helpersBefore = helpers.map((helper) => helper.cpuSeconds());
  const machineBefore = machineBusySeconds();
  const result = await run(scenario, settings, settings.duration);
  const serverAfter = cpuOf(serverPids);
  const partsAfter = serverPids.map((pid) => cpuSeconds(pid));
  const helpersAfter = helpers.map((helper) => helper.cpuSeconds());
  const machineAfter = machineBusySeconds();

  const { requests } = result;
  const perRequest = (before: number | undefined, after: number | undefined) =>
    before === undefined || after === undefined || requests === 0 ? undefined : ((after - before) * 1e6) / requests;
  const delta = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? Number.NaN : after - before);
  const ours = delta(serverBefore, serverAfter) + helpers.reduce((sum, _helper, index) => sum + delta(helpersBefore[index], helpersAfter[index]), 0) + result.loadCpu;
  const others = (delta(machineBefore, machineAfter) - ours) / result.seconds;
  return {
    scenario: scenario.name,
    round,
    seconds: result.seconds,
    requests,
    rps: requests / result.seconds,
    ...(result.bytes !== undefined && requests > 0 ? { bytesPerAnswer: result.bytes / requests } : {}),
    latency: result.latency,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: result.statusCodes,
    cpu: {
      server: perRequest(serverBefore, serverAfter),
      ...(serverPids.length > 1 ? { serverParts: serverPids.map((_pid, index) => perRequest(partsBefore[index], partsAfter[index])) } : {}),
      helpers: Object.fromEntries(helpers.map((helper, index) => [helper.name, perRequest(helpersBefore[index], helpersAfter[index])])),
      loadGenerator: requests === 0 ? Number.NaN : (result.loadCpu * 1e6) / requests,
    },
    otherLoad: Number.isFinite(others) ? Math.max(0, others) : undefined,
  };
}

/** The CPU seconds of several processes together; undefined when one of them cannot be read. */
function cpuOf(pids: readonly number[]): number | undefined {
  return pids.reduce<number | undefined>((sum, pid) => {
    const seconds = cpuSeconds(pid);
    return sum === undefined || seconds === undefined ? undefined : sum + seconds;
  }, 0);
}

/** autocannon in this process; latencies from every 2xx response's own time (its histogram rounds to whole ms). */
async function runAutocannon(scenario: Scenario, settings: LoadSettings, seconds: number): Promise<LoadRun> {
  if (scenario.rotateCookies) throw new Error(`${scenario.name}: rotating cookies needs wrk`);
  const loadBefore = process.cpuUsage();
  const latencies = new Samples();
  const instance = autocannon({ url: scenario.url, headers: scenario.headers, connections: settings.connections, pipelining: settings.pipelining, timeout: 10, duration: seconds });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result: Result = await instance;
  const load = process.cpuUsage(loadBefore);
  const sorted = latencies.sorted();
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    seconds: result.duration,
    requests: result.requests.total,
    latency: {
      mean: sorted.length ? sum / sorted.length : Number.NaN,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
    loadCpu: (load.user + load.system) / 1e6,
  };
}

const wrkReport = fileURLToPath(new URL('wrk-report.lua', import.meta.url));
const wrkRotate = fileURLToPath(new URL('wrk-rotate.lua', import.meta.url));

/** The JSON line wrk-report.lua prints. */
interface WrkReport {
  durationUs: number;
  requests: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  meanUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
  bytes: number;
}

/**
 * wrk as a child process (its CPU time is read from this process's ended children once it exits).
 * wrk counts answers with a status of 400 or more as errors but does not tell 2xx from 3xx: each
 * scenario's answer is checked once before any load (run.ts).
 */
async function runWrk(scenario: Scenario, settings: LoadSettings, seconds: number): Promise<LoadRun> {
  // wrk takes whole seconds only.
  const duration = Math.max(1, Math.round(seconds));
  const args = ['--threads', String(settings.wrkThreads), '--connections', String(settings.connections), '--duration', `${duration}s`, '--timeout', '10s', '--script', scenario.rotateCookies ? wrkRotate : wrkReport];
  // wrk adds `Host: <the URL's host>` unless its headers hold "Host" in exactly that case: a lower-case
  // "host" would make it send two Host lines (which Gatehouse answers with 400).
  for (const [name, value] of Object.entries(scenario.headers)) args.push('--header', `${name.toLowerCase() === 'host' ? 'Host' : name}: ${value}`);
  args.push(scenario.url);
  if (scenario.rotateCookies) args.push('--', scenario.rotateCookies);
  const before = endedChildrenCpuSeconds();
  const { stdout } = await execFileAsync('wrk', args, { encoding: 'utf8', timeout: (duration + 30) * 1000 });
  const after = endedChildrenCpuSeconds();
  const line = stdout.split('\n').findLast((text) => text.startsWith('{'));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  const report = JSON.parse(line) as WrkReport;
  const socketErrors = report.connect + report.read + report.write;
  return {
    seconds: report.durationUs / 1e6,
    requests: report.requests,
    bytes: report.bytes,
    latency: { mean: report.meanUs / 1000, p50: report.p50Us / 1000, p90: report.p90Us / 1000, p99: report.p99Us / 1000, max: report.maxUs / 1000 },
    errors: socketErrors,
    timeouts: report.timeout,
    non2xx: report.status,
    statusCodes: report.status ? { '400 or more': report.status } : {},
    loadCpu: before === undefined || after === undefined ? Number.NaN : after - before,
  };
}

export function problems(measurement: Measurement): string | undefined {
  const issues = [
    measurement.errors ? `${measurement.errors} connection errors` : '',
    measurement.timeouts ? `${measurement.timeouts} timeouts` : '',
    measurement.non2xx ? `${measurement.non2xx} non-2xx responses (${JSON.stringify(measurement.statusCodes)})` : '',
    measurement.requests === 0 ? 'no request completed' : '',
  ].filter(Boolean);
  return issues.length ? issues.join(', ') : undefined;
}
