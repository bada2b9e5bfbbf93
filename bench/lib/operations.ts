import { signInToApp } from './browser.js';
import { startGatehouse, type RunningGatehouse } from './gatehouse.js';
import { measure, type LoadSettings, type Measurement, type Scenario, type ScenarioName } from './load.js';
import type { ProcessGroup, ServerProcess } from './processes.js';
import { fixed, percentile, spread, table, type Spread } from './stats.js';

/**
 * What operations cost on the two hot paths: the same forward-auth check and proxied request on a node
 * with Prometheus metrics on (scraped every second while it is measured, as Prometheus would, only
 * faster), and on one with the access log on (to a file), each beside the main node and a control node
 * like it (both off), in interleaved slices (measureInterleaved). Reported as ratios on / off; the
 * control's ratio is the method's own error. The issue's budget for metrics is 3 %.
 */
export interface OperationsSetup {
  scenarios: Scenario[];
  /** Measured in interleaved slices: each group is a path on the main node (first) and on the three others. */
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
  // The control is a node like the main one (both off): its ratio is what the method reads for no cost.
  const nodes: Array<{ kind: 'control' | 'metrics' | 'access-log'; node: RunningGatehouse }> = [];
  for (const kind of ['control', 'metrics', 'access-log'] as const) {
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
      ['forward-auth', 'forward-auth-control', 'forward-auth-metrics', 'forward-auth-access-log'],
      ['proxy', 'proxy-control', 'proxy-metrics', 'proxy-access-log'],
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

/**
 * The four nodes measured in turn, one second each, `slices` times over (each slice starts with a
 * different node). A cost of a few per cent is far smaller than how much a shared machine's speed drifts
 * for seconds at a time (the same node has read 39 and 79 µs of CPU per forward-auth check a few seconds
 * apart): short slices in turn put every node through the same drifts, and the report reads each
 * node's undisturbed speed as its best quarter of slices. The nodes are warm (a discarded second each
 * first); `round` in each measurement is its slice.
 */
export async function measureInterleaved(setup: OperationsSetup, scenarios: ReadonlyMap<ScenarioName, Scenario>, settings: LoadSettings, slices: number): Promise<Measurement[]> {
  for (const name of setup.groups.flat()) await measure(scenarios.get(name)!, 0, { ...settings, duration: 1 });
  const measurements: Measurement[] = [];
  const sliceSettings = { ...settings, warmup: 0, duration: 1 };
  for (let slice = 1; slice <= slices; slice++) {
    for (const group of setup.groups) {
      const shift = slice % group.length;
      for (const name of [...group.slice(shift), ...group.slice(0, shift)]) {
        measurements.push(await setup.scrapedDuring(name, () => measure(scenarios.get(name)!, slice, sliceSettings)));
      }
    }
  }
  return measurements;
}

export interface OperationsReport {
  /** On / off of each node's best quarter of slices (req/s: its 75th percentile; CPU per request: its 25th). */
  ratios: Record<string, number>;
  /** On / off slice by slice (runs seconds apart), for the spread. */
  perSlice: Record<string, Spread>;
  scrapes: OperationsSetup['scrapes'];
}

export function reportOperations(setup: OperationsSetup, measurements: Measurement[], slices: number, say: (line?: string) => void): OperationsReport {
  const of = (name: ScenarioName) => measurements.filter((m) => m.scenario === name);
  const quarter = (name: ScenarioName, pick: (m: Measurement) => number | undefined, p: number) =>
    percentile(of(name).map(pick).filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b), p);
  const rps = (m: Measurement) => m.rps;
  const cpu = (m: Measurement) => m.cpu.server;
  const pairs = [
    ['forwardAuthControl', 'forward-auth-control', 'forward-auth', 'forward-auth, control (no change)', ''],
    ['proxyControl', 'proxy-control', 'proxy', 'proxy, control (no change)', ''],
    ['forwardAuthMetrics', 'forward-auth-metrics', 'forward-auth', 'forward-auth, metrics', '1.03'],
    ['proxyMetrics', 'proxy-metrics', 'proxy', 'proxy, metrics', '1.03'],
    ['forwardAuthAccessLog', 'forward-auth-access-log', 'forward-auth', 'forward-auth, access log', ''],
    ['proxyAccessLog', 'proxy-access-log', 'proxy', 'proxy, access log', ''],
  ] as const;
  const ratios: Record<string, number> = {};
  const perSlice: Record<string, Spread> = {};
  const rows: string[][] = [];
  for (const [key, subject, baseline, label, budget] of pairs) {
    ratios[`${key}Rps`] = quarter(subject, rps, 75) / quarter(baseline, rps, 75);
    ratios[`${key}Cpu`] = quarter(subject, cpu, 25) / quarter(baseline, cpu, 25);
    perSlice[`${key}Cpu`] = spread(
      Array.from({ length: slices }, (_, index) => {
        const [a, b] = [of(subject).find((m) => m.round === index + 1), of(baseline).find((m) => m.round === index + 1)];
        const [x, y] = [a && cpu(a), b && cpu(b)];
        return x === undefined || y === undefined || y === 0 ? Number.NaN : x / y;
      }),
    );
    const slice = perSlice[`${key}Cpu`]!;
    rows.push([
      label,
      fixed(ratios[`${key}Rps`], 3),
      fixed(ratios[`${key}Cpu`], 3),
      `${fixed(slice.median, 2)} (${fixed(slice.min, 2)}–${fixed(slice.max, 2)})`,
      budget ? `CPU ≤ ${budget}: ${ratios[`${key}Cpu`]! <= Number(budget) ? 'met' : 'MISSED'}` : '',
    ]);
  }
  say(`operations: on / off over ${slices} interleaved slices of 1 s (1.000 = no cost); each node's best quarter of slices, and slice by slice`);
  say(table(['ratio (on / off)', 'req/s', 'CPU/req', 'CPU/req per slice: median (min–max)', 'budget'], rows));
  const scraped = setup.scrapes.reduce((sum, s) => sum + s.ok, 0);
  const failed = setup.scrapes.reduce((sum, s) => sum + s.failed, 0);
  say(`/metrics scraped ${scraped} times during the metrics-on measurements (${failed} failed); the last scrape counted ${setup.scrapes.at(-1)?.requestsCounted ?? 0} requests of its area.`);
  return { ratios, perSlice, scrapes: setup.scrapes };
}
