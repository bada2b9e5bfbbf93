import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';

/**
 * How many workers `workers: auto` starts: one per core this process may use. In a container that is
 * not the machine's core count but its CPU limit (Kubernetes' `resources.limits.cpu`, `docker run
 * --cpus`), which Linux enforces as a cgroup CPU quota: a pod limited to 2 CPUs on a 64-core node
 * would otherwise start 64 workers that share 2 CPUs of time, each with its own database pool.
 *
 * The limit is read from the cgroup the process is in (/proc/self/cgroup) and from every cgroup above
 * it, as the kernel applies the smallest: cgroup v2's `cpu.max` ("<quota> <period>" or "max <period>"),
 * else cgroup v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1: none). Within a container the
 * cgroup's own path is often not visible under the mount (the container sees its cgroup as the root),
 * so each level that does not exist is skipped and the mount's root is read too. Anything missing,
 * unreadable or odd means "no limit here": the core count stands, never a guess.
 */
export interface CpuLimitSources {
  /** Where the cgroup file system is mounted (/sys/fs/cgroup). */
  cgroupRoot?: string;
  /** This process's cgroup membership (/proc/self/cgroup). */
  selfCgroup?: string;
  /** The cores the process may run on (os.availableParallelism()). */
  cores?: number;
}

/** `workers: auto`: the cores, or fewer when a cgroup CPU quota allows less (rounded up, at least 1). */
export function autoWorkers({ cgroupRoot = '/sys/fs/cgroup', selfCgroup = '/proc/self/cgroup', cores = availableParallelism() }: CpuLimitSources = {}): number {
  const quota = cpuQuota(cgroupRoot, selfCgroup);
  if (quota === undefined) return Math.max(1, cores);
  return Math.max(1, Math.min(cores, Math.ceil(quota)));
}

/** The CPU quota in CPUs (1.5 = one and a half), the smallest along the cgroup's path; undefined when none. */
export function cpuQuota(cgroupRoot: string, selfCgroup: string): number | undefined {
  const membership = read(selfCgroup) ?? '';
  const limits = [...v2Limits(cgroupRoot, membership)];
  // cgroup v1 only where v2 says nothing: on a hybrid host the v2 tree may exist without the cpu controller.
  if (limits.length === 0) limits.push(...v1Limits(cgroupRoot, membership));
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

/** cgroup v2: `0::/some/path` in /proc/self/cgroup, `cpu.max` in each directory from there up to the mount. */
function* v2Limits(root: string, membership: string): Generator<number> {
  const own = membership.split('\n').find((line) => line.startsWith('0::'));
  for (const dir of upwards(root, own?.slice(3) ?? '/')) {
    const fields = read(path.join(dir, 'cpu.max'))?.trim().split(/\s+/);
    if (fields?.length !== 2 || fields[0] === 'max') continue;
    const limit = ratio(fields[0]!, fields[1]!);
    if (limit !== undefined) yield limit;
  }
}

/** cgroup v1: the `cpu` controller's line (`4:cpu,cpuacct:/docker/…`), and its mount (`cpu,cpuacct`, or `cpu`). */
function* v1Limits(root: string, membership: string): Generator<number> {
  const line = membership.split('\n').find((entry) => entry.split(':')[1]?.split(',').includes('cpu'));
  const own = line ? line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1) : '/';
  for (const mount of ['cpu,cpuacct', 'cpu', 'cpuacct,cpu']) {
    let found = false;
    for (const dir of upwards(path.join(root, mount), own)) {
      const quota = read(path.join(dir, 'cpu.cfs_quota_us'))?.trim();
      const period = read(path.join(dir, 'cpu.cfs_period_us'))?.trim();
      if (quota === undefined || period === undefined) continue;
      found = true;
      const limit = ratio(quota, period);
      if (limit !== undefined) yield limit;
    }
    // The same hierarchy is often mounted under several names (symbolic links): read it once.
    if (found) return;
  }
}

/** The directories from `root/own` up to `root` itself, deepest first; never outside `root`. */
function upwards(root: string, own: string): string[] {
  const parts = own.split('/').filter((part) => part !== '' && part !== '.' && part !== '..');
  const dirs: string[] = [];
  for (let depth = parts.length; depth >= 0; depth--) dirs.push(path.join(root, ...parts.slice(0, depth)));
  return dirs;
}

/** quota / period as CPUs, when both are positive whole numbers (v1's -1, "max", junk: no limit). */
function ratio(quota: string, period: string): number | undefined {
  if (!/^\d{1,18}$/.test(quota) || !/^\d{1,18}$/.test(period)) return undefined;
  const [q, p] = [Number(quota), Number(period)];
  return q > 0 && p > 0 ? q / p : undefined;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
