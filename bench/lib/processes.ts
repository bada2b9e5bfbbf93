import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The servers under test, each in its own Node process (never in the load generator's), each in its
 * own process group so that whatever it starts (Gatehouse starts the development IdP) goes with it.
 */
export class ServerProcess {
  private output = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-64 * 1024);
      for (const wake of this.waiters) wake();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    void this.exited.then(() => {
      for (const wake of this.waiters) wake();
    });
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.name} has no pid`);
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines it printed, for error messages. */
  tail(lines = 30): string {
    return this.output.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Resolves with the first match of `pattern` in its output; rejects if it exits or times out first. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.output);
        if (match) return done(() => resolve(match));
        if (!this.running) return done(() => reject(new Error(`${this.name} exited before it was ready:\n${this.tail()}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.tail()}`))), timeoutMs);
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }
}

export class ProcessGroup {
  private readonly servers = new Set<ServerProcess>();

  /** Starts `args` with this Node (or with `options.command`, for a server that is not a Node program). */
  start(name: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; command?: string }): ServerProcess {
    const child = spawn(options.command ?? process.execPath, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const server = new ServerProcess(name, child);
    this.servers.add(server);
    return server;
  }

  /** SIGTERM to each server, then SIGKILL to its whole process group if it has not exited in time. */
  async stopAll(graceMs = 5_000): Promise<void> {
    await Promise.all([...this.servers].map((server) => this.stop(server, graceMs)));
  }

  /** SIGTERM to one server, then SIGKILL to its whole process group if it has not exited in time. */
  async stop(server: ServerProcess, graceMs = 5_000): Promise<void> {
    if (server.running) {
      server.child.kill('SIGTERM');
      const stopped = await Promise.race([server.exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref())]);
      if (!stopped) {
        killGroup(server, 'SIGKILL');
        await server.exited;
      }
    }
    // Whatever it started may still be running in its group: it died on its own, or was stopped while
    // starting (Gatehouse stopped before its signal handlers are in place leaves its development IdP).
    killGroup(server, 'SIGTERM');
    this.servers.delete(server);
  }

  /** Last resort on process exit: no time left to be graceful. */
  killAllNow(): void {
    for (const server of this.servers) if (server.running) killGroup(server, 'SIGKILL');
    this.servers.clear();
  }
}

/** Signals the group a server leads (it was spawned detached): the server and anything it started. */
function killGroup(server: ServerProcess, signal: NodeJS.Signals): void {
  if (server.child.pid === undefined) return;
  try {
    process.kill(-server.child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

export { freePort } from '../../packages/server/test/support/ports.js';

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (fields 14 and 15, in
 * clock ticks: 10 ms at the usual 100 Hz). Undefined where there is no /proc.
 */
export function cpuSeconds(pid: number): number | undefined {
  return statSeconds(`/proc/${pid}/stat`, 11);
}

/**
 * CPU seconds of a server that starts and ends processes of its own (PostgreSQL's backends): its own,
 * its ended children's (counted in its /proc/<pid>/stat once it has waited for them) and its running
 * children's. A child that ends between two readings moves from the third sum to the second, so the
 * difference of two readings is the whole group's CPU in between. Undefined where there is no /proc.
 */
export function cpuSecondsWithChildren(pid: number): number | undefined {
  const own = statSeconds(`/proc/${pid}/stat`, 11);
  const ended = statSeconds(`/proc/${pid}/stat`, 13);
  if (own === undefined || ended === undefined) return undefined;
  // A child may end between listing and reading it: it is then counted as ended, if at all (a few ticks).
  return own + ended + childPids(pid).reduce((sum, child) => sum + (cpuSeconds(child) ?? 0), 0);
}

/**
 * CPU seconds (user + system) used so far by this process's children that have ended and been waited
 * for (/proc/self/stat fields 16 and 17): a load generator run as a child process is counted here once
 * it exits. Undefined where there is no /proc.
 */
export function endedChildrenCpuSeconds(): number | undefined {
  return statSeconds('/proc/self/stat', 13);
}

/**
 * The sum of two adjacent clock-tick fields of a /proc/<pid>/stat file, in seconds. `index` counts the
 * fields after the command name (field 2, in parentheses, may contain spaces: they are counted after the
 * last ')'), so field n of proc(5) is index n - 3.
 */
function statSeconds(file: string, index: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const first = Number(fields[index]);
  const second = Number(fields[index + 1]);
  if (!Number.isFinite(first) || !Number.isFinite(second)) return undefined;
  return (first + second) / ticksPerSecond();
}

/**
 * Busy CPU seconds of the whole machine so far, summed over its CPUs (user, nice, system, irq, softirq
 * and steal from /proc/stat), to tell how much else ran during a measurement. Undefined without /proc.
 */
export function machineBusySeconds(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const [user, nice, system, , , irq, softirq, steal] = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
  return Number.isFinite(busy) ? busy / ticksPerSecond() : undefined;
}

/** A process's children (from /proc/<pid>/task/<tid>/children); empty where there is no /proc. */
export function childPids(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/** The command line of a process, its arguments apart; empty when it is gone. */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Every process's pid (/proc's numbered entries); empty where there is no /proc. */
function allPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
}

/** The processes whose command line satisfies `match`. */
export function findProcesses(match: (args: string[]) => boolean): number[] {
  return allPids().filter((pid) => match(commandLine(pid)));
}

/**
 * Every process's CPU seconds so far, by pid, with its name (/proc/<pid>/stat's comm and the first
 * arguments): two readings name what ran in between. Kernel threads (kworker: the disk's writeback)
 * are processes here too. Empty where there is no /proc.
 */
export function everyProcessCpu(): Map<number, { name: string; seconds: number }> {
  const found = new Map<number, { name: string; seconds: number }>();
  for (const pid of allPids()) {
    const seconds = cpuSeconds(pid);
    if (seconds === undefined) continue;
    let comm = '';
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const args = commandLine(pid).slice(0, 3).map((arg) => arg.split('/').at(-1)).join(' ');
    found.set(pid, { name: args ? `${comm} (${args.slice(0, 60)})` : comm, seconds });
  }
  return found;
}

/** What used the most CPU between two readings of `everyProcessCpu`, seconds each, the largest first. */
export function busiestBetween(before: Map<number, { name: string; seconds: number }>, after: Map<number, { name: string; seconds: number }>, count = 3): Array<{ pid: number; name: string; seconds: number }> {
  return [...after]
    .map(([pid, { name, seconds }]) => ({ pid, name, seconds: seconds - (before.get(pid)?.seconds ?? 0) }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count);
}
