import { cpus } from 'node:os';
import type { Measurement, ScenarioName } from './load.js';
import type { PropagationResult } from './propagation.js';
import type { ScaleSetup } from './scale.js';
import { fixed, spread, table, thousands, type Spread } from './stats.js';

/** Targets of the scale measurements (the issue's "Measured" section). */
const TARGETS = {
  /** PostgreSQL within 5 % of SQLite, warm cache. */
  postgresRps: 0.95,
  /** Two workers' CPU per request does not grow; 5 % is what the bench resolves between runs. */
  workersCpu: 1.05,
  /** The check's cost does not grow with a million more rows in the table; the same 5 %. */
  largeTableCpu: 1.05,
  /** A miss's CPU (with PostgreSQL's) over a cached check's, on each database: the issue's figures. */
  missSqliteCpu: 5,
  missPostgresCpu: 8,
  /** The issue's figure for a change reaching every node (p99, ms). */
  propagationP99Ms: 100,
};

interface Pair {
  key: string;
  label: string;
  subject: ScenarioName;
  baseline: ScenarioName;
}

/** Each ratio: a subject over its baseline, measured in the same round. */
const PAIRS: Pair[] = [
  { key: 'twoWorkers', label: 'forward-auth 2 workers / 1', subject: 'forward-auth-2w', baseline: 'forward-auth-1w' },
  { key: 'postgresForwardAuth', label: 'forward-auth PostgreSQL / SQLite', subject: 'forward-auth-pg', baseline: 'forward-auth-1w' },
  { key: 'postgresProxy', label: 'proxy PostgreSQL / SQLite', subject: 'proxy-pg', baseline: 'proxy-sqlite' },
  { key: 'coldSqlite', label: '100k sessions / one, SQLite', subject: 'forward-auth-100k', baseline: 'forward-auth-1w' },
  { key: 'coldPostgres', label: '100k sessions / one, PostgreSQL', subject: 'forward-auth-100k-pg', baseline: 'forward-auth-pg' },
  { key: 'coldPostgresOverSqlite', label: '100k sessions PostgreSQL / SQLite', subject: 'forward-auth-100k-pg', baseline: 'forward-auth-100k' },
  { key: 'largeTableSqlite', label: '+1M rows / without, SQLite', subject: 'forward-auth-100k-1m', baseline: 'forward-auth-100k' },
  { key: 'largeTablePostgres', label: '+1M rows / without, PostgreSQL', subject: 'forward-auth-100k-1m-pg', baseline: 'forward-auth-100k-pg' },
  // The floor of a miss (bench/miss-floor.mjs) against Gatehouse's cached check, and Gatehouse's miss against that floor.
  { key: 'floorSqlite', label: 'miss floor / one, SQLite', subject: 'miss-floor-100k', baseline: 'forward-auth-1w' },
  { key: 'overFloorSqlite', label: '100k sessions / miss floor, SQLite', subject: 'forward-auth-100k', baseline: 'miss-floor-100k' },
  { key: 'floorPostgres', label: 'miss floor / one, PostgreSQL', subject: 'miss-floor-100k-pg', baseline: 'forward-auth-pg' },
  { key: 'overFloorPostgres', label: '100k sessions / miss floor, PostgreSQL', subject: 'forward-auth-100k-pg', baseline: 'miss-floor-100k-pg' },
];

export interface ScaleTarget {
  name: string;
  value: number;
  target: string;
  pass: boolean;
  /** What the same run's floor of this figure read, when the floor alone misses the target: not reachable here. */
  floorMisses?: number;
}

export interface ScaleReport {
  rounds: Array<Record<string, number>>;
  ratios: Record<string, Spread>;
  firstRequests: ScaleSetup['firstRequests'];
  startReviews: ScaleSetup['startReviews'];
  propagation: PropagationResult | undefined;
  seeding: ScaleSetup['seeding'];
  postgres: boolean;
  targets: ScaleTarget[];
}

type Summary = Record<
  string,
  { rps: Spread; p50: Spread; p99: Spread; serverCpuUsPerRequest: Spread; helperCpuUsPerRequest: Record<string, Spread>; loadGeneratorCpuUsPerRequest: Spread }
>;

/** CPU per request of Gatehouse and, on PostgreSQL, of the database server: the work a check costs wherever it is done. */
function cpuWithDatabase(m: Measurement | undefined): number | undefined {
  if (m?.cpu.server === undefined) return undefined;
  return m.cpu.server + (m.cpu.helpers.postgres ?? 0);
}

export function reportScale(input: {
  scale: ScaleSetup;
  measurements: readonly Measurement[];
  scenarioSummary: Summary;
  scaleRounds: number;
  invalid: boolean;
  say: (line?: string) => void;
}): ScaleReport {
  const { scale, measurements, scenarioSummary, scaleRounds, say } = input;
  const of = (name: ScenarioName, round: number) => measurements.find((m) => m.scenario === name && m.round === round);
  const measured = new Set(measurements.map((m) => m.scenario));
  const pairs = PAIRS.filter((pair) => measured.has(pair.subject) && measured.has(pair.baseline));
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b === 0 ? Number.NaN : a / b);
  const rounds = Array.from({ length: scaleRounds }, (_, index) => {
    const round = index + 1;
    const values: Record<string, number> = { round };
    for (const { key, subject, baseline } of pairs) {
      const s = of(subject, round);
      const b = of(baseline, round);
      values[`${key}Rps`] = ratio(s?.rps, b?.rps);
      values[`${key}Cpu`] = ratio(cpuWithDatabase(s), cpuWithDatabase(b));
      values[`${key}P99`] = ratio(s?.latency.p99, b?.latency.p99);
    }
    return values;
  });
  const ratios: Record<string, Spread> = Object.fromEntries(
    pairs.flatMap(({ key }) => ['Rps', 'Cpu', 'P99'].map((what) => [`${key}${what}`, spread(rounds.map((r) => r[`${key}${what}`] ?? Number.NaN))])),
  );

  say(`AT SCALE: ${scaleRounds} round${scaleRounds === 1 ? '' : 's'} (the first of the run), ratios within each round`);
  const names = scale.scenarios.map((scenario) => scenario.name).filter((name) => measured.has(name));
  say(
    table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'PostgreSQL CPU µs/req', 'load-gen CPU µs/req'],
      names.map((name) => {
        const s = scenarioSummary[name]!;
        return [
          name,
          `${thousands(s.rps.median)} [${thousands(s.rps.min)}–${thousands(s.rps.max)}]`,
          fixed(s.p50.median, 2),
          `${fixed(s.p99.median, 2)} [${fixed(s.p99.min, 2)}–${fixed(s.p99.max, 2)}]`,
          fixed(s.serverCpuUsPerRequest.median, 1),
          s.helperCpuUsPerRequest.postgres ? fixed(s.helperCpuUsPerRequest.postgres.median, 1) : '',
          fixed(s.loadGeneratorCpuUsPerRequest.median, 1),
        ];
      }),
    ),
  );
  say('forward-auth-1w and proxy-sqlite are the main Gatehouse (SQLite, one process); -2w is a node with two workers (server CPU: the primary and both');
  say('workers); -pg a node on PostgreSQL; -100k rotate through that many distinct sessions (wrk-rotate.lua), more than the session cache holds, so every');
  say('check reads its session from the database; -1m the same sessions in a copy of that table with a million more. PostgreSQL CPU: its server and');
  say('backends. The CPU ratios below count Gatehouse and PostgreSQL together (SQLite works inside Gatehouse\'s process).');
  say();
  say(
    table(
      ['ratio (per round, median)', 'req/s', 'min–max', 'CPU/req', 'min–max', 'p99'],
      pairs.map(({ key, label }) => {
        const [rps, cpu, p99] = ['Rps', 'Cpu', 'P99'].map((what) => ratios[`${key}${what}`]!);
        return [label, fixed(rps!.median, 2), `${fixed(rps!.min, 2)}–${fixed(rps!.max, 2)}`, fixed(cpu!.median, 2), `${fixed(cpu!.min, 2)}–${fixed(cpu!.max, 2)}`, fixed(p99!.median, 2)];
      }),
    ),
  );
  say();

  if (scale.firstRequests.length) {
    say('The first request of a session, one at a time on an idle node (no other load; ms from sending to the whole answer), beside as many requests of a cached session:');
    say(
      table(
        ['node', 'database', 'sessions in table', 'first request p50', 'p90', 'p99', 'cached p50', 'p99', 'machine busy, CPUs', 'of it neither client nor server'],
        scale.firstRequests.map((r) => [
          r.node,
          r.database,
          thousands(r.tableRows),
          fixed(r.cold.p50, 3),
          fixed(r.cold.p90, 3),
          fixed(r.cold.p99, 3),
          r.warm ? fixed(r.warm.p50, 3) : '',
          r.warm ? fixed(r.warm.p99, 3) : '',
          r.machineLoad === undefined ? '' : fixed(r.machineLoad, 2),
          r.otherLoad === undefined ? '' : fixed(r.otherLoad, 2),
        ]),
      ),
    );
    for (const r of scale.firstRequests) if (r.busiest) say(`  beside ${r.node}'s first requests, the busiest other processes (CPUs): ${r.busiest}`);
    say();
  }
  if (scale.startReviews.length) {
    say('At start each node judged every live session against the sign-in rules, twice (sessions/admissionReview.ts; wall time, with the other database\'s setup running beside):');
    for (const { node, database, passes } of scale.startReviews) {
      say(`  ${node} (${database}): ${passes.map((p) => `${thousands(p.sessions)} sessions in ${thousands(p.ms)} ms (${fixed((p.ms * 1000) / Math.max(1, p.sessions), 1)} µs each)`).join(', then ')}`);
    }
    say();
  }
  const { propagation } = scale;
  if (propagation) {
    say(
      `Revocation across two nodes on one PostgreSQL, ${propagation.samples} sessions: revoked on node A (DELETE /api/me/sessions/<id>), refused by node B ` +
        `after p50 ${fixed(propagation.refused.p50, 2)} ms, p90 ${fixed(propagation.refused.p90, 2)}, p99 ${fixed(propagation.refused.p99, 2)}, max ${fixed(propagation.refused.max, 2)} ms ` +
        `(A answered its DELETE after p50 ${fixed(propagation.answered.p50, 2)} ms; B polled ${fixed(propagation.pollsPerSample, 0)} times per revocation, median; ${propagation.missed} never refused within 5 s).`,
    );
  }
  say(
    `Seeding: ${thousands(scale.seeding.sessions)} sessions per database written by the stores in ${fixed(scale.seeding.storeSeconds, 1)} s in all; ` +
      `${thousands(scale.seeding.filler)} filler sessions per database with SQL in ${fixed(scale.seeding.fillerSeconds, 1)} s in all.`,
  );
  if (scale.postgresSkipped) say(`PostgreSQL was left out: ${scale.postgresSkipped}.`);
  say();

  const targets: ScaleTarget[] = [];
  const target = (name: string, value: number | undefined, text: string, pass: (v: number) => boolean, floor?: number) => {
    if (value === undefined || !Number.isFinite(value)) return;
    targets.push({ name, value, target: text, pass: pass(value), ...(floor !== undefined && Number.isFinite(floor) && !pass(floor) ? { floorMisses: floor } : {}) });
  };
  target('forward-auth PostgreSQL / SQLite rps (cached)', ratios.postgresForwardAuthRps?.median, `≥ ${TARGETS.postgresRps.toFixed(2)}`, (v) => v >= TARGETS.postgresRps);
  target('proxy PostgreSQL / SQLite rps (cached)', ratios.postgresProxyRps?.median, `≥ ${TARGETS.postgresRps.toFixed(2)}`, (v) => v >= TARGETS.postgresRps);
  target('forward-auth 2 workers / 1 CPU per request', ratios.twoWorkersCpu?.median, `≤ ${TARGETS.workersCpu.toFixed(2)}`, (v) => v <= TARGETS.workersCpu);
  target('forward-auth 100k sessions / one, SQLite, CPU per request', ratios.coldSqliteCpu?.median, `≤ ${TARGETS.missSqliteCpu.toFixed(2)}`, (v) => v <= TARGETS.missSqliteCpu, ratios.floorSqliteCpu?.median);
  target('forward-auth 100k sessions / one, PostgreSQL, CPU per request', ratios.coldPostgresCpu?.median, `≤ ${TARGETS.missPostgresCpu.toFixed(2)}`, (v) => v <= TARGETS.missPostgresCpu, ratios.floorPostgresCpu?.median);
  target('session check +1M rows / without, SQLite, CPU per request', ratios.largeTableSqliteCpu?.median, `≤ ${TARGETS.largeTableCpu.toFixed(2)}`, (v) => v <= TARGETS.largeTableCpu);
  target('session check +1M rows / without, PostgreSQL, CPU per request', ratios.largeTablePostgresCpu?.median, `≤ ${TARGETS.largeTableCpu.toFixed(2)}`, (v) => v <= TARGETS.largeTableCpu);
  if (propagation) {
    target('revocation on node A refused by node B, p99 ms', propagation.missed ? Number.POSITIVE_INFINITY : propagation.refused.p99, `≤ ${TARGETS.propagationP99Ms}`, (v) => v <= TARGETS.propagationP99Ms);
  }
  for (const t of targets) {
    const shown = t.target.includes(fixed(t.value, 2)) ? fixed(t.value, 3) : fixed(t.value, 2);
    const verdict = input.invalid ? 'INVALID RUN' : t.pass ? 'PASS' : t.floorMisses !== undefined ? `MISS, not reachable here: the floor alone read ${fixed(t.floorMisses, 2)}` : 'MISS';
    say(`${t.name} ${Number.isFinite(t.value) ? shown : 'never'} (target ${t.target}) ${verdict}`);
  }
  for (const [database, floor, over] of [['SQLite', ratios.floorSqliteCpu, ratios.overFloorSqliteCpu], ['PostgreSQL', ratios.floorPostgresCpu, ratios.overFloorPostgresCpu]] as const) {
    if (floor && over) {
      say(
        `  ${database}: the floor of a miss alone (bench/miss-floor.mjs: the read and the signature on plain node:http) costs ${fixed(floor.median, 2)} × ` +
          `Gatehouse's cached check; Gatehouse's miss costs ${fixed(over.median, 2)} × that floor`,
      );
    }
  }
  const parts = measurements.filter((m) => m.scenario === 'forward-auth-2w' && m.cpu.serverParts).map((m) => m.cpu.serverParts!);
  if (parts.length) {
    const share = (index: number) => spread(parts.map((p) => p[index] ?? Number.NaN)).median;
    say(`  2 workers' CPU per request, medians: the primary ${fixed(share(0), 1)} µs, the workers ${parts[0]!.slice(1).map((_p, index) => `${fixed(share(index + 1), 1)} µs`).join(' and ')}`);
  }
  const twoWorkers = ratios.twoWorkersRps;
  if (twoWorkers) say(`  beside them: 2 workers answered ${fixed(twoWorkers.median, 2)} × one process's req/s on this machine's ${cpus().length} cores, with the load generator on the same cores`);
  return { rounds, ratios, firstRequests: scale.firstRequests, startReviews: scale.startReviews, propagation, seeding: scale.seeding, postgres: scale.postgres, targets };
}
