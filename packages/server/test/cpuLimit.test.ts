import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { autoWorkers } from '../src/config/cpuLimit.js';

/**
 * `workers: auto` and a container's CPU limit: the cgroup files are laid out in a temporary folder that
 * stands for /sys/fs/cgroup, with a /proc/self/cgroup of the test's choosing.
 */
let root: string;
let cgroup: string;
let self: string;

beforeEach(() => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-cgroup-'));
  root = path.join(dir, 'sys-fs-cgroup');
  self = path.join(dir, 'proc-self-cgroup');
  mkdirSync(root);
  cgroup = dir;
});
afterEach(() => rmSync(cgroup, { recursive: true, force: true }));

function write(relative: string, content: string): void {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

const auto = (cores: number) => autoWorkers({ cgroupRoot: root, selfCgroup: self, cores });

describe('workers: auto', () => {
  it('is the core count without any cgroup limit', () => {
    writeFileSync(self, '0::/\n');
    write('cpu.max', 'max 100000\n');
    expect(auto(8)).toBe(8);
  });

  it('is the core count when nothing can be read', () => {
    expect(autoWorkers({ cgroupRoot: path.join(root, 'missing'), selfCgroup: path.join(root, 'missing-too'), cores: 6 })).toBe(6);
  });

  // Regression: a pod limited to 2 CPUs on a 64-core node started 64 workers.
  it('follows a cgroup v2 quota, rounded up', () => {
    writeFileSync(self, '0::/\n');
    write('cpu.max', '200000 100000\n');
    expect(auto(64)).toBe(2);
    write('cpu.max', '150000 100000\n');
    expect(auto(64)).toBe(2);
    write('cpu.max', '50000 100000\n');
    expect(auto(64)).toBe(1);
  });

  it('never goes above the cores, nor below one', () => {
    writeFileSync(self, '0::/\n');
    write('cpu.max', '800000 100000\n');
    expect(auto(4)).toBe(4);
    write('cpu.max', '1 100000\n');
    expect(auto(4)).toBe(1);
    expect(auto(0)).toBe(1);
  });

  it("takes the smallest quota along the process's cgroup path (the kernel applies each level)", () => {
    writeFileSync(self, '0::/kubepods/pod1/container\n');
    write('kubepods/cpu.max', 'max 100000\n');
    write('kubepods/pod1/cpu.max', '300000 100000\n');
    write('kubepods/pod1/container/cpu.max', 'max 100000\n');
    expect(auto(16)).toBe(3);
  });

  it("reads the mount's root when the cgroup's own path is not visible (a container's namespace)", () => {
    writeFileSync(self, '0::/system.slice/docker-abc.scope\n');
    write('cpu.max', '250000 100000\n');
    expect(auto(16)).toBe(3);
  });

  it('falls back to cgroup v1 (cfs quota and period), -1 being no limit', () => {
    writeFileSync(self, '12:pids:/\n4:cpu,cpuacct:/docker/abc\n0::/\n');
    write('cpu,cpuacct/docker/abc/cpu.cfs_quota_us', '300000\n');
    write('cpu,cpuacct/docker/abc/cpu.cfs_period_us', '100000\n');
    expect(auto(32)).toBe(3);
    write('cpu,cpuacct/docker/abc/cpu.cfs_quota_us', '-1\n');
    expect(auto(32)).toBe(32);
  });

  it('reads cgroup v1 from a separate cpu mount too', () => {
    writeFileSync(self, '2:cpuacct:/\n1:cpu:/\n0::/\n');
    write('cpu/cpu.cfs_quota_us', '100000\n');
    write('cpu/cpu.cfs_period_us', '100000\n');
    expect(auto(2)).toBe(1);
  });

  it('treats odd files as no limit', () => {
    writeFileSync(self, '0::/\n');
    for (const odd of ['', 'max', '200000', 'abc 100000', '200000 0', '-5 100000', '2e5 1e5', '200000 100000 7', '0 100000']) {
      write('cpu.max', odd);
      expect(auto(5), JSON.stringify(odd)).toBe(5);
    }
  });

  it('never reads outside the cgroup mount, whatever /proc/self/cgroup says', () => {
    // A path climbing out of the mount must not reach a cpu.max beside it.
    writeFileSync(path.join(cgroup, 'cpu.max'), '100000 100000\n');
    writeFileSync(self, '0::/../..\n');
    expect(auto(4)).toBe(4);
  });
});
