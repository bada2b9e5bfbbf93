import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { freePort } from '../support/ports.js';
import { oidcApp } from './support/relyingParty.js';
import { connectionPerWorker, type Pinned } from './support/workers.js';

const MAX = 3;
/** The budget of failed client authentications per address and minute (provide/clientAuthLimit.ts). */
const CLIENT_AUTH_MAX = 20;
const SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';

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
 * Threat: brute force through the sign-in endpoints, or guesses of a client secret at the OpenID
 * Provider's token endpoint, on a node that runs several workers (`workers: 2`, no Redis). Each worker
 * counting alone would give the node twice the budget; the node's primary counts for all of them. A primary that does not answer holds no sign-in up, and does not turn the
 * limit off: each worker counts its own meanwhile, with one warning, and the primary's count resumes
 * when it answers again.
 */
describe('the rate limits of a node with two workers', () => {
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
        // A client of the OpenID Provider, for the limit on failed client authentications.
        apps: [oidcApp('grafana', 'Grafana', `http://grafana.localhost:${port}`, { secrets: [SECRET] })],
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

  it('counts failed client authentications once for the node: the failure after the budget is refused on either worker', async () => {
    // Threat: guessing a client secret at the token endpoint over both workers of a node. Counted in
    // each worker, a node of N workers allowed N times the budget; the primary counts for all of them.
    const [a, b] = (await connectionPerWorker(Number(new URL(portal).port), gatehouse.pid!)) as [Pinned, Pinned];
    const client = '198.51.100.20';
    const token = (on: Pinned, secret: string) =>
      on.send('POST', '/oidc/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'grafana', client_secret: secret }).toString(),
      });
    const guess = (on: Pinned) => token(on, `guess-${randomBytes(8).toString('hex')}-0123456789abcdefghijklmnopqrstuvwxyz`);
    try {
      // Half the budget on each worker, B counting the last failure within it.
      for (let i = 0; i < CLIENT_AUTH_MAX / 2; i++) for (const on of [a, b]) expect((await guess(on)).status).toBe(401);
      // The next failure, on A (which has not counted the budget's last): past the budget, answered 429.
      const limited = await guess(a);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(JSON.parse(limited.body)).toMatchObject({ error: 'invalid_client' });
      // From now on both workers refuse the address before authenticating: the right secret too.
      for (const on of [b, a]) expect((await guess(on)).status).toBe(429);
      for (const on of [a, b]) expect((await token(on, SECRET)).status).toBe(429);
      // Another address authenticates on either worker (its refresh token is what is refused).
      for (const on of [a, b]) {
        const other = await on.send('POST', '/oidc/token', {
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.21' },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'grafana', client_secret: SECRET }).toString(),
        });
        expect(other.status).toBe(400);
        expect(JSON.parse(other.body)).toMatchObject({ error: 'invalid_grant' });
      }
    } finally {
      a.close();
      b.close();
    }
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
      await waitForOutput('counts the rate limits again');
      // One warning (at most one a minute), before the all-clear.
      expect(running.output().split('does not count the rate limits').length - 1).toBe(1);
      expect(running.output()).toContain('each worker counts its own');
    } finally {
      agent.destroy();
    }
  });
});
