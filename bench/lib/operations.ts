import { signInToApp } from './browser.js';
import { startGatehouse, type RunningGatehouse } from './gatehouse.js';
import type { Measurement, Scenario, ScenarioName } from './load.js';
import type { ProcessGroup, ServerProcess } from './processes.js';
import { fixed, spread, table, type Spread } from './stats.js';

/**
 * What operations cost on the two hot paths: the same forward-auth check and proxied request on a node
 * with Prometheus metrics on (scraped every second while it is measured, as Prometheus would, only
 * faster), and on one with the access log on (to a file), each beside the main node (both off), in the
 * same rounds. Reported as ratios per round: the budget for metrics is 3 %.
 */
export interface OperationsSetup {
  scenarios: Scenario[];
  /** Measured back to back with the main node's forward-auth and proxy. */
  groups: ScenarioName[][];
  servers: ServerProcess[];
  /** Runs a measurement; one of a metrics-on node is scraped every second while it runs (recorded in `scrapes`). */
  scrapedDuring<T>(name: ScenarioName, run: () => Promise<T>): Promise<T>;
  scrapes: Array<{ scenario: ScenarioName; round: number; ok: number; failed: number; samples: number; requestsCounted: number }>;
}

export async function setUpOperations(input: {
  processes: ProcessGroup;
  root: string;
  workDir: string;
  upstreamPort: number;
  nodeArgs: readonly string[];
  forwardAuthHeaders: Record<string, string>;
}): Promise<OperationsSetup> {
  const nodes: Array<{ kind: 'metrics' | 'access-log'; node: RunningGatehouse }> = [];
  for (const kind of ['metrics', 'access-log'] as const) {
    const node = await startGatehouse(input.processes, {
      root: input.root,
      workDir: input.workDir,
      upstreamPort: input.upstreamPort,
      nodeArgs: input.nodeArgs,
      name: `gatehouse-${kind}`,
      metrics: kind === 'metrics',
      accessLog: kind === 'access-log',
    });
    nodes.push({ kind, node });
  }
  const scenarios: Scenario[] = [];
  for (const { kind, node } of nodes) {
    const signIn = await signInToApp({ appOrigin: node.appOrigin, portalOrigin: node.portalOrigin, providerId: node.providerId, login: 'alice@example.com', password: 'alice' });
    const cookie = `${signIn.cookieName}=${signIn.token}`;
    scenarios.push(
      {
        name: `forward-auth-${kind}`,
        url: `http://127.0.0.1:${node.port}/.gatehouse/auth/${node.appId}`,
        headers: { ...input.forwardAuthHeaders, 'x-forwarded-host': node.appHost, cookie },
        server: node.server,
      },
      { name: `proxy-${kind}`, url: `http://127.0.0.1:${node.port}/some/path`, headers: { host: node.appHost, cookie }, server: node.server },
    );
  }
  const metricsUrl = nodes.find(({ kind }) => kind === 'metrics')!.node.metricsUrl!;
  const scrapes: OperationsSetup['scrapes'] = [];
  const rounds = new Map<ScenarioName, number>();
  return {
    scenarios,
    groups: [
      ['forward-auth', 'forward-auth-metrics', 'forward-auth-access-log'],
      ['proxy', 'proxy-metrics', 'proxy-access-log'],
    ],
    servers: nodes.map(({ node }) => node.server),
    scrapes,
    async scrapedDuring(name, run) {
      if (!name.endsWith('-metrics')) return run();
      const round = (rounds.get(name) ?? 0) + 1;
      rounds.set(name, round);
      const record = { scenario: name, round, ok: 0, failed: 0, samples: 0, requestsCounted: 0 };
      const area = name.startsWith('proxy') ? 'proxy' : 'forward_auth';
      const scrape = async () => {
        try {
          const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) });
          const text = await response.text();
          if (response.status !== 200) throw new Error(String(response.status));
          const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
          record.ok++;
          record.samples = lines.length;
          record.requestsCounted = lines
            .filter((line) => line.startsWith('gatehouse_http_requests_total{') && line.includes(`area="${area}"`))
            .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
        } catch {
          record.failed++;
        }
      };
      const timer = setInterval(() => void scrape(), 1_000);
      try {
        return await run();
      } finally {
        clearInterval(timer);
        await scrape();
        scrapes.push(record);
      }
    },
  };
}

export interface OperationsReport {
  ratios: Record<string, Spread>;
  scrapes: OperationsSetup['scrapes'];
}

/** Per round: metrics on / off and access log on / off, for req/s and server CPU per request. */
export function reportOperations(setup: OperationsSetup, measurements: Measurement[], rounds: number, say: (line?: string) => void): OperationsReport {
  const of = (name: ScenarioName, round: number) => measurements.find((m) => m.scenario === name && m.round === round);
  const per = (subject: ScenarioName, baseline: ScenarioName, pick: (m: Measurement) => number | undefined) =>
    spread(
      Array.from({ length: rounds }, (_, index) => {
        const [a, b] = [of(subject, index + 1), of(baseline, index + 1)];
        const [x, y] = [a && pick(a), b && pick(b)];
        return x === undefined || y === undefined || y === 0 ? Number.NaN : x / y;
      }),
    );
  const rps = (m: Measurement) => m.rps;
  const cpu = (m: Measurement) => m.cpu.server;
  const ratios = {
    forwardAuthMetricsRps: per('forward-auth-metrics', 'forward-auth', rps),
    forwardAuthMetricsCpu: per('forward-auth-metrics', 'forward-auth', cpu),
    proxyMetricsRps: per('proxy-metrics', 'proxy', rps),
    proxyMetricsCpu: per('proxy-metrics', 'proxy', cpu),
    forwardAuthAccessLogRps: per('forward-auth-access-log', 'forward-auth', rps),
    forwardAuthAccessLogCpu: per('forward-auth-access-log', 'forward-auth', cpu),
    proxyAccessLogRps: per('proxy-access-log', 'proxy', rps),
    proxyAccessLogCpu: per('proxy-access-log', 'proxy', cpu),
  };
  const row = (label: string, s: Spread, target = '') => [label, fixed(s.median, 3), `${fixed(s.min, 3)}–${fixed(s.max, 3)}`, target];
  say(`operations: on / off, computed per round, median over ${rounds} rounds (1.000 = no cost)`);
  say(
    table(
      ['ratio', 'median', 'min–max', 'target'],
      [
        row('forward-auth, metrics on / off   req/s', ratios.forwardAuthMetricsRps, '≥ 0.97'),
        row('forward-auth, metrics on / off   CPU/req', ratios.forwardAuthMetricsCpu, '≤ 1.03'),
        row('proxy, metrics on / off          req/s', ratios.proxyMetricsRps, '≥ 0.97'),
        row('proxy, metrics on / off          CPU/req', ratios.proxyMetricsCpu, '≤ 1.03'),
        row('forward-auth, access log on / off req/s', ratios.forwardAuthAccessLogRps),
        row('forward-auth, access log on / off CPU/req', ratios.forwardAuthAccessLogCpu),
        row('proxy, access log on / off        req/s', ratios.proxyAccessLogRps),
        row('proxy, access log on / off        CPU/req', ratios.proxyAccessLogCpu),
      ],
    ),
  );
  const scraped = setup.scrapes.reduce((sum, s) => sum + s.ok, 0);
  const failed = setup.scrapes.reduce((sum, s) => sum + s.failed, 0);
  say(`/metrics scraped ${scraped} times during the metrics-on measurements (${failed} failed); the last scrape counted ${setup.scrapes.at(-1)?.requestsCounted ?? 0} requests of its area.`);
  return { ratios, scrapes: setup.scrapes };
}
