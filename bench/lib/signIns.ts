import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { signInToApp } from './browser.js';
import { startGatehouse, type RunningGatehouse } from './gatehouse.js';
import { childPids, commandLine, cpuSeconds, machineBusySeconds, type ProcessGroup, type ServerProcess } from './processes.js';
import { fixed, percentile, spread, table, thousands, type Spread } from './stats.js';

/**
 * Sign-ins as fast as they go (bench/README.md, "Sign-ins through the whole flow"): several scripted
 * browsers at once, each sign-in a new browser with no cookies, from the app's first request through
 * Gatehouse's start, the development IdP's login form, Gatehouse's callback and the app host's handshake
 * to the app's page (lib/browser.ts, signInToApp), on a Gatehouse node of its own (SQLite, one process;
 * its development IdP is its child process). Reported per sign-in: Gatehouse's CPU apart from the IdP's
 * and the browsers' (this process), the rows it left in each table, and the bytes it gave the disk.
 */
export interface SignInSettings {
  /** Browsers signing in at once. */
  browsers: number;
  /** Seconds of sign-ins measured, and of discarded ones before them. */
  seconds: number;
  warmup: number;
}

export interface SignInMeasurement {
  round: number;
  signIns: number;
  failures: number;
  firstFailure?: string;
  seconds: number;
  perSecond: number;
  /** Milliseconds, each sign-in from the app's first request to its page. */
  latency: { p50: number; p90: number; p99: number; max: number };
  /** Milliseconds of CPU per sign-in: Gatehouse's process, the development IdP's, this process (the browsers). */
  cpu: { gatehouse: number | undefined; idp: number | undefined; browsers: number };
  /** Sign-ins per second of Gatehouse's CPU: per core. */
  perCore: number | undefined;
  /** CPUs' worth of other work on the machine meanwhile (as in lib/load.ts). */
  otherLoad: number | undefined;
  /** Bytes Gatehouse's process gave the storage layer per sign-in (/proc/<pid>/io write_bytes: the WAL, checkpoints). */
  bytesWritten: number | undefined;
  /** Rows more in each table afterwards, per sign-in (only the tables that changed). */
  rows: Record<string, number>;
}

export interface SignInSetup {
  node: RunningGatehouse;
  /** The development IdP's process (Gatehouse's child). */
  idpPid: number;
  servers: ServerProcess[];
}

/** Two people of the development IdP's default set take turns: each sign-in is a person on a new device. */
const PEOPLE = [
  { login: 'alice@example.com', password: 'alice' },
  { login: 'bob@example.com', password: 'bob' },
];

export async function setUpSignIns(input: { processes: ProcessGroup; root: string; workDir: string; upstreamPort: number; nodeArgs: readonly string[] }): Promise<SignInSetup> {
  const node = await startGatehouse(input.processes, {
    root: input.root,
    workDir: input.workDir,
    upstreamPort: input.upstreamPort,
    nodeArgs: input.nodeArgs,
    name: 'gatehouse-sign-ins',
    // Every browser here comes from 127.0.0.1, and the limit (30 starts and callbacks a minute per
    // address) would refuse all but the first few: it is raised out of reach, not turned off (each
    // start and callback is still counted).
    signInRateLimit: 1_000_000_000,
  });
  const idpPid = childPids(node.server.pid).find((pid) => commandLine(pid).some((arg) => arg.endsWith('dev-idp/dist/main.js')));
  if (idpPid === undefined) throw new Error(`${node.server.name}: its development IdP process was not found among its children`);
  return { node, idpPid, servers: [node.server] };
}

/** One run: `browsers` loops signing in until `seconds` are up (those under way then finish and count). */
export async function measureSignIns(setup: SignInSetup, round: number, settings: SignInSettings): Promise<SignInMeasurement> {
  if (settings.warmup > 0) await signInLoops(setup, settings.browsers, settings.warmup);
  const database = path.join(setup.node.dataDir, 'gatehouse.db');
  const rowsBefore = countRows(database);
  const gatehouseBefore = cpuSeconds(setup.node.server.pid);
  const idpBefore = cpuSeconds(setup.idpPid);
  const writtenBefore = writeBytes(setup.node.server.pid);
  const machineBefore = machineBusySeconds();
  const browsersBefore = process.cpuUsage();
  const run = await signInLoops(setup, settings.browsers, settings.seconds);
  const browsersCpu = process.cpuUsage(browsersBefore);
  const machineAfter = machineBusySeconds();
  const gatehouseAfter = cpuSeconds(setup.node.server.pid);
  const idpAfter = cpuSeconds(setup.idpPid);
  const writtenAfter = writeBytes(setup.node.server.pid);
  const rowsAfter = countRows(database);

  const n = run.durations.length;
  const delta = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? undefined : after - before);
  const gatehouse = delta(gatehouseBefore, gatehouseAfter);
  const idp = delta(idpBefore, idpAfter);
  const browsers = (browsersCpu.user + browsersCpu.system) / 1e6;
  const busy = delta(machineBefore, machineAfter);
  const others = busy === undefined || gatehouse === undefined || idp === undefined ? undefined : Math.max(0, (busy - gatehouse - idp - browsers) / run.seconds);
  const perSignIn = (seconds: number | undefined) => (seconds === undefined || n === 0 ? undefined : (seconds * 1000) / n);
  const written = delta(writtenBefore, writtenAfter);
  const sorted = Float64Array.from(run.durations).sort();
  return {
    round,
    signIns: n,
    failures: run.failures,
    ...(run.firstFailure ? { firstFailure: run.firstFailure } : {}),
    seconds: run.seconds,
    perSecond: n / run.seconds,
    latency: { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN },
    cpu: { gatehouse: perSignIn(gatehouse), idp: perSignIn(idp), browsers: perSignIn(browsers)! },
    perCore: gatehouse === undefined || gatehouse === 0 ? undefined : n / gatehouse,
    otherLoad: others,
    bytesWritten: written === undefined || n === 0 ? undefined : written / n,
    rows: Object.fromEntries(
      Object.entries(rowsAfter)
        .map(([name, count]) => [name, n === 0 ? Number.NaN : (count - (rowsBefore[name] ?? 0)) / n] as const)
        .filter(([, perSignIn]) => perSignIn !== 0),
    ),
  };
}

async function signInLoops(setup: SignInSetup, browsers: number, seconds: number): Promise<{ durations: number[]; failures: number; firstFailure?: string; seconds: number }> {
  const { appOrigin, portalOrigin, providerId } = setup.node;
  const durations: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let turn = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: browsers }, async () => {
      while (performance.now() < end) {
        const person = PEOPLE[turn++ % PEOPLE.length]!;
        const t0 = performance.now();
        try {
          // A new browser each time (signInToApp makes one): no cookie from an earlier sign-in, at Gatehouse or at the IdP.
          await signInToApp({ appOrigin, portalOrigin, providerId, ...person });
          durations.push(performance.now() - t0);
        } catch (error) {
          failures++;
          firstFailure ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  return { durations, failures, ...(firstFailure ? { firstFailure } : {}), seconds: (performance.now() - started) / 1000 };
}

/** Rows in each of the node's tables (a read-only connection of its own, opened for the count). */
function countRows(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare<[], { name: string }>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'").all();
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare<[], { n: number }>(`select count(*) as n from "${name}"`).get()!.n]));
  } finally {
    db.close();
  }
}

/** Bytes a process has caused to be sent to the storage layer so far (/proc/<pid>/io); undefined where there is none. */
function writeBytes(pid: number): number | undefined {
  try {
    const match = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export interface SignInReport {
  target: { name: string; value: number; target: string; pass: boolean };
  browsers: number;
  perSecond: Spread;
  perCore: Spread;
  /** Per sign-in, medians over the rounds. */
  cpuMs: { gatehouse: Spread; idp: Spread; browsers: Spread };
  latencyMs: { p50: Spread; p99: Spread };
  bytesWritten: Spread;
  rows: Record<string, Spread>;
  otherLoad: Spread;
  measurements: SignInMeasurement[];
}

/** Keycloak's published sizing: about 15 password sign-ins per second per vCPU. */
export const SIGN_IN_TARGET = 15;

export function reportSignIns(measurements: readonly SignInMeasurement[], settings: SignInSettings, invalid: boolean, say: (line?: string) => void): SignInReport {
  const of = (pick: (m: SignInMeasurement) => number | undefined) => spread(measurements.map((m) => pick(m) ?? Number.NaN));
  const tables = [...new Set(measurements.flatMap((m) => Object.keys(m.rows)))].sort();
  const report: SignInReport = {
    target: { name: 'sign-ins per core (Gatehouse)', value: Number.NaN, target: `≥ ${SIGN_IN_TARGET}`, pass: false },
    browsers: settings.browsers,
    perSecond: of((m) => m.perSecond),
    perCore: of((m) => m.perCore),
    cpuMs: { gatehouse: of((m) => m.cpu.gatehouse), idp: of((m) => m.cpu.idp), browsers: of((m) => m.cpu.browsers) },
    latencyMs: { p50: of((m) => m.latency.p50), p99: of((m) => m.latency.p99) },
    bytesWritten: of((m) => m.bytesWritten),
    rows: Object.fromEntries(tables.map((name) => [name, of((m) => m.rows[name] ?? 0)])),
    otherLoad: of((m) => m.otherLoad),
    measurements: [...measurements],
  };
  report.target.value = report.perCore.median;
  report.target.pass = report.perCore.median >= SIGN_IN_TARGET;

  say(`SIGN-INS: the whole flow (app → start → IdP login form → callback → app), ${settings.browsers} browsers at once, a new one per sign-in`);
  say(
    table(
      ['round', 'sign-ins', 'per s', 'p50 ms', 'p99 ms', 'Gatehouse CPU ms', 'IdP CPU ms', 'browsers CPU ms', 'per core', 'other load'],
      measurements.map((m) => [
        String(m.round),
        thousands(m.signIns),
        fixed(m.perSecond, 1),
        fixed(m.latency.p50, 1),
        fixed(m.latency.p99, 1),
        fixed(m.cpu.gatehouse, 2),
        fixed(m.cpu.idp, 2),
        fixed(m.cpu.browsers, 2),
        fixed(m.perCore, 0),
        fixed(m.otherLoad, 2),
      ]),
    ),
  );
  const row = (label: string, s: Spread, digits: number) => [label, fixed(s.median, digits), `${fixed(s.min, digits)}–${fixed(s.max, digits)}`];
  say();
  say(`per sign-in, median over ${measurements.length} rounds [min–max]`);
  say(
    table(
      ['', 'median', 'min–max'],
      [
        row('sign-ins per second', report.perSecond, 1),
        row("sign-ins per second of Gatehouse's CPU (per core)", report.perCore, 0),
        row('Gatehouse CPU ms (not its IdP)', report.cpuMs.gatehouse, 2),
        row('development IdP CPU ms', report.cpuMs.idp, 2),
        row('browsers (this process) CPU ms', report.cpuMs.browsers, 2),
        row('p50 ms, a whole sign-in', report.latencyMs.p50, 1),
        row('p99 ms', report.latencyMs.p99, 1),
        row("kB Gatehouse's process wrote to storage", { median: report.bytesWritten.median / 1024, min: report.bytesWritten.min / 1024, max: report.bytesWritten.max / 1024 }, 1),
        ...tables.map((name) => row(`rows more in ${name}`, report.rows[name]!, 2)),
      ],
    ),
  );
  const failures = measurements.reduce((sum, m) => sum + m.failures, 0);
  if (failures) say(`INVALID: ${failures} sign-ins failed; the first: ${measurements.find((m) => m.firstFailure)?.firstFailure ?? ''}`);
  const shown = report.target.target.includes(fixed(report.target.value, 0)) ? fixed(report.target.value, 1) : fixed(report.target.value, 0);
  say(`${report.target.name} ${shown} (target ${report.target.target}, Keycloak's published sizing per vCPU) ${invalid || failures ? 'INVALID RUN' : report.target.pass ? 'PASS' : 'MISS'}`);
  return report;
}
