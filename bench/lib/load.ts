import autocannon, { type Result } from 'autocannon';
import { cpuSeconds, machineBusySeconds, type ServerProcess } from './processes.js';
import { percentile, Samples } from './stats.js';

export type ScenarioName = 'bare' | 'bare-identity' | 'forward-auth' | 'direct' | 'proxy' | 'plain-proxy';

export interface Scenario {
  name: ScenarioName;
  url: string;
  headers: Record<string, string>;
  /** The server under test: its CPU time per request is reported. */
  server: ServerProcess;
  /** Other processes that work for each request (the upstream behind the proxy); their CPU is reported apart. */
  helpers?: ServerProcess[];
}

export interface LoadSettings {
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
  /** Milliseconds, from every 2xx response's own time (autocannon's histogram rounds to whole ms). */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU time per request, in microseconds. */
  cpu: { server: number | undefined; helpers: Record<string, number | undefined>; loadGenerator: number };
  /**
   * CPUs' worth of work done meanwhile by everything else on the machine (other jobs, and kernel work
   * charged to no process), averaged over the run: 0.5 means about half a core was taken from the benchmark.
   */
  otherLoad: number | undefined;
}

/** A discarded warm-up run, then the measured run with the processes' CPU time read around it. */
export async function measure(scenario: Scenario, round: number, settings: LoadSettings): Promise<Measurement> {
  const options = { url: scenario.url, headers: scenario.headers, connections: settings.connections, pipelining: settings.pipelining, timeout: 10 };
  if (settings.warmup > 0) await autocannon({ ...options, duration: settings.warmup });

  const helpers = scenario.helpers ?? [];
  const serverBefore = cpuSeconds(scenario.server.pid);
  const helpersBefore = helpers.map((helper) => cpuSeconds(helper.pid));
  const machineBefore = machineBusySeconds();
  const loadBefore = process.cpuUsage();
  const latencies = new Samples();
  const instance = autocannon({ ...options, duration: settings.duration });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result: Result = await instance;
  const load = process.cpuUsage(loadBefore);
  const serverAfter = cpuSeconds(scenario.server.pid);
  const helpersAfter = helpers.map((helper) => cpuSeconds(helper.pid));
  const machineAfter = machineBusySeconds();

  const requests = result.requests.total;
  const perRequest = (before: number | undefined, after: number | undefined) =>
    before === undefined || after === undefined || requests === 0 ? undefined : ((after - before) * 1e6) / requests;
  const delta = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? Number.NaN : after - before);
  const ours = delta(serverBefore, serverAfter) + helpers.reduce((sum, _helper, index) => sum + delta(helpersBefore[index], helpersAfter[index]), 0) + (load.user + load.system) / 1e6;
  const others = (delta(machineBefore, machineAfter) - ours) / result.duration;
  const sorted = latencies.sorted();
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    scenario: scenario.name,
    round,
    seconds: result.duration,
    requests,
    rps: requests / result.duration,
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
    cpu: {
      server: perRequest(serverBefore, serverAfter),
      helpers: Object.fromEntries(helpers.map((helper, index) => [helper.name, perRequest(helpersBefore[index], helpersAfter[index])])),
      loadGenerator: requests === 0 ? Number.NaN : (load.user + load.system) / requests,
    },
    otherLoad: Number.isFinite(others) ? Math.max(0, others) : undefined,
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
