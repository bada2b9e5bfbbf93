import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { freePort } from '../support/ports.js';

const MAX = 3;

/**
 * A sign-in start, on a connection of its own (the cluster hands each new one to the next worker) or on
 * `agent`'s; from `client` (X-Forwarded-For, from a trusted proxy) when given.
 */
function signInStart(portal: string, agent: Agent | false = false, client?: string): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(agent ? {} : { connection: 'close' }), ...(client ? { 'x-forwarded-for': client } : {}) };
    const req = httpRequest(`${portal}/.gatehouse/sign-in/gone`, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('no answer in 5 s')));
    req.end();
  });
}

/**
 * Threat: brute force through the sign-in endpoints of a node that runs several workers (`workers: 2`,
 * no Redis). Each worker counting alone would give the node twice the budget; the node's primary
 * counts for all of them. A primary that does not answer holds no sign-in up, and does not turn the
 * limit off: each worker counts its own meanwhile, with one warning, and the primary's count resumes
 * when it answers again.
 */
describe('the sign-in rate limit of a node with two workers', () => {
  let gatehouse: ChildProcess;
  let dir: string;
  let portal: string;
  let running: BuiltProcess;
  let stopped = false;

  const waitForOutput = (text: string) => running.waitFor(text);

  beforeAll(async () => {
    const port = await freePort();
    portal = `http://localhost:${port}`;
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-workers-limit-'));
    const file = path.join(dir, 'gatehouse.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        mode: 'production',
        publicUrl: portal,
        listen: { host: '127.0.0.1', port },
        dataDir: path.join(dir, 'data'),
        workers: 2,
        trustedProxies: ['127.0.0.1/8'],
        log: { level: 'info' },
        secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] },
        signIn: { rateLimit: { max: MAX, window: '1h' } },
        // An issuer nobody answers at: a sign-in start is a prompt 502, counted like any other.
        providers: [{ id: 'gone', name: 'Gone IdP', issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x', clientSecret: 'y' }],
      }),
    );
    running = startBuiltProcess(file);
    gatehouse = running.child;
    await waitForOutput('ready with 2 workers');
  });

  afterAll(async () => {
    if (gatehouse && gatehouse.exitCode === null) {
      if (stopped) process.kill(gatehouse.pid!, 'SIGCONT');
      await running.stop();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts one budget for the node: the request after the limit is refused, whichever worker it reaches', async () => {
    // One connection each, in turn: the primary hands them to the two workers alternately.
    const answers = [];
    for (let i = 0; i < 2 * MAX; i++) answers.push(await signInStart(portal));
    expect(answers.map((answer) => answer.status)).toEqual([502, 502, 502, 429, 429, 429]);
    expect(Number(answers[MAX]!.retryAfter)).toBeGreaterThan(0);
  });

  // Regression: a primary that did not answer turned the limit off (fail open) for every worker.
  it('counts in the worker while the primary does not answer, warns once, and counts in the primary again once it does', async () => {
    // A connection that already belongs to a worker (a stopped primary hands over no new ones).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const client = '198.51.100.9';
    try {
      // Counted by the primary, and by the worker itself.
      expect((await signInStart(portal, agent, client)).status).toBe(502);
      process.kill(gatehouse.pid!, 'SIGSTOP');
      stopped = true;
      // The primary does not answer: each count is given up after 500 ms and the worker's own decides,
      // from what it had counted: two more, then refused.
      for (let i = 1; i < MAX; i++) expect((await signInStart(portal, agent, client)).status).toBe(502);
      const limited = await signInStart(portal, agent, client);
      expect(limited.status).toBe(429);
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      process.kill(gatehouse.pid!, 'SIGCONT');
      stopped = false;
      // The primary counted the questions it had not answered too: refused there as well.
      expect((await signInStart(portal, agent, client)).status).toBe(429);
      await waitForOutput('counts sign-ins again');
      // One warning (at most one a minute), before the all-clear.
      expect(running.output().split('does not count sign-ins').length - 1).toBe(1);
      expect(running.output()).toContain('each worker counts its own');
    } finally {
      agent.destroy();
    }
  });
});
