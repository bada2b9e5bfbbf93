import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { freePort } from './support/freePort.js';

const MAX = 3;

/** A sign-in start, on a connection of its own (the cluster hands each new one to the next worker) or on `agent`'s. */
function signInStart(portal: string, agent: Agent | false = false): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${portal}/.gatehouse/sign-in/gone`, { agent, headers: agent ? {} : { connection: 'close' } }, (res) => {
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
 * counts for all of them. A primary that does not answer holds no sign-in up: the limit fails open,
 * with one warning, and counting resumes when it answers again.
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

  it('lets sign-ins through when the primary does not answer, warns once, and counts again once it does', async () => {
    // A connection that already belongs to a worker (a stopped primary hands over no new ones).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await signInStart(portal, agent)).status).toBe(429);
      process.kill(gatehouse.pid!, 'SIGSTOP');
      stopped = true;
      // The budget is spent, yet a primary that does not answer must not hold sign-ins up: fail open.
      expect((await signInStart(portal, agent)).status).toBe(502);
      expect((await signInStart(portal, agent)).status).toBe(502);
      process.kill(gatehouse.pid!, 'SIGCONT');
      stopped = false;
      expect((await signInStart(portal, agent)).status).toBe(429);
      await waitForOutput('counts sign-ins again');
      // Two sign-ins let through, one warning (at most one a minute), before the all-clear.
      expect(running.output().split('does not count sign-ins').length - 1).toBe(1);
    } finally {
      agent.destroy();
    }
  });
});
