import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { formAction, ScriptedBrowser } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';
import { connectionPerWorker, workersOf, type Pinned } from './support/workers.js';


/** GET on a connection of its own: the cluster hands each new connection to the next worker. */
function get(url: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { cookie, connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.setTimeout(3_000, () => req.destroy(new Error(`no answer from ${url} in 3 s`)));
    req.end();
  });
}

/** A JSON POST on a connection of its own (so two at once reach both workers); its status and body. */
function postJson(url: string, cookie: string, csrf: string, body: unknown): Promise<{ status: number; type: string; body: string }> {
  const payload = JSON.stringify(body);
  const { origin } = new URL(url);
  return new Promise((resolve, reject) => {
    const headers = { cookie, origin, 'x-csrf-token': csrf, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), connection: 'close' };
    const req = httpRequest(url, { method: 'POST', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: text }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer from ${url} in 5 s`)));
    req.end(payload);
  });
}

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

/** Alice signs in through the development IdP's login form, in a browser of her own. */
async function signIn(portal: string): Promise<ScriptedBrowser> {
  const browser = new ScriptedBrowser();
  const first = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`), isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login: 'alice@example.com', password: 'alice' } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  const done = await browser.request(callback!.href);
  expect(done.status).toBe(303);
  return browser;
}

/**
 * `workers: 2`: one node, two processes sharing the listening socket (node:cluster). What one worker
 * changes must reach what the other keeps in memory at once.
 */
describe('a node with two workers', () => {
  let dev: DevIdpProcess;
  let gatehouse: ChildProcess;
  let dir: string;
  let store: TestStore | undefined;
  let portal: string;
  let running: BuiltProcess;

  beforeAll(async () => {
    const port = await freePort();
    portal = `http://localhost:${port}`;
    dev = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-workers-'));
    store = await createTestStore();
    const file = path.join(dir, 'gatehouse.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        mode: 'production',
        publicUrl: portal,
        listen: { host: '127.0.0.1', port },
        ...storeConfig(store),
        workers: 2,
        log: { level: 'info' },
        secrets: { cookieKey: randomBytes(32).toString('base64url'), encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] },
        signIn: { rateLimit: { max: 10_000 } },
        admins: { emails: ['alice@example.com'] },
        providers: [{ id: 'dev', name: 'Development IdP', issuer: dev.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, pushedAuthorizationRequests: 'never' }],
      }),
    );
    running = startBuiltProcess(file);
    gatehouse = running.child;
    // Both workers listening: every request from here on may reach either.
    await running.waitFor('ready with 2 workers');
  });

  afterAll(async () => {
    await running?.stop();
    await dev?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (store) await removeTestStore(store);
  });

  const sessionCookie = (browser: ScriptedBrowser) => `gatehouse_session=${browser.cookie('localhost', 'gatehouse_session')}`;

  // Threat: a session revoked through one worker still let in by the other worker's cache.
  it('a session revoked through one worker is refused by every worker at once', async () => {
    const alice = await signIn(portal);
    const other = await signIn(portal);
    const otherCookie = sessionCookie(other);
    // Each worker answers (and caches) the other session.
    for (let i = 0; i < 6; i++) expect(await get(`${portal}/api/session`, otherCookie)).toBe(200);

    const { session } = JSON.parse((await other.request(`${portal}/api/session`)).body) as { session: { id: string } };
    const { csrfToken } = JSON.parse((await alice.request(`${portal}/api/csrf`)).body) as { csrfToken: string };
    const revoked = await alice.request(`${portal}/api/me/sessions/${session.id}`, { method: 'DELETE', headers: { origin: portal, 'x-csrf-token': csrfToken } });
    expect(revoked.status).toBe(204);

    const answers = await Promise.all(Array.from({ length: 6 }, () => get(`${portal}/api/session`, otherCookie)));
    expect(answers).toEqual([401, 401, 401, 401, 401, 401]);
    // Alice's own session is untouched on every worker.
    const own = await Promise.all(Array.from({ length: 4 }, () => get(`${portal}/api/session`, sessionCookie(alice))));
    expect(own).toEqual([200, 200, 200, 200]);
  });

  // Threat: two admins creating apps for one host at the same moment, each request on another worker
  // (two processes, each with its own registry, as two nodes would have): both pass their registry's
  // check. Without the database's one-app-per-host rule both were created: two apps claiming one host,
  // only one of them served, the other's policy shown in the console for nothing.
  it('two apps created with one host at once, on both workers: exactly one is created, the other answers 409 naming the host', async () => {
    const alice = await signIn(portal);
    const cookie = sessionCookie(alice);
    const { csrfToken } = JSON.parse((await alice.request(`${portal}/api/csrf`)).body) as { csrfToken: string };
    const port = new URL(portal).port;
    for (let round = 0; round < 6; round++) {
      const host = `race${round}.localhost:${port}`;
      const app = (id: string) => ({ id, name: id, publicUrl: `http://${host}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
      const answers = await Promise.all([`race${round}-a`, `race${round}-b`].map((id) => postJson(`${portal}/api/admin/apps`, cookie, csrfToken, app(id))));
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
      const created = (JSON.parse(answers.find((answer) => answer.status === 201)!.body) as { id: string }).id;
      const refused = answers.find((answer) => answer.status === 409)!;
      expect(refused.type).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'conflict', field: 'publicUrl', detail: `Another app ("${created}") already uses ${host}. Choose another.` });
      // Every worker lists the one app for the host.
      for (let i = 0; i < 2; i++) {
        const listed = JSON.parse((await alice.request(`${portal}/api/admin/apps`)).body) as { apps: Array<{ id: string; publicUrl: string }> };
        expect(listed.apps.filter((listedApp) => listedApp.publicUrl === `http://${host}`).map((listedApp) => listedApp.id)).toEqual([created]);
      }
    }
    // One id at once, likewise: one is created, the other is told the id is taken.
    const app = (host: string) => ({ id: 'twice', name: 'Twice', publicUrl: `http://${host}.localhost:${port}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } });
    const answers = await Promise.all(['twice-a', 'twice-b'].map((host) => postJson(`${portal}/api/admin/apps`, cookie, csrfToken, app(host))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(JSON.parse(answers.find((answer) => answer.status === 409)!.body)).toMatchObject({ code: 'conflict', field: 'id', detail: 'Another app already has the id "twice". Choose another.' });
  });

  describe('a revocation is answered once every worker of the node has dropped the session', () => {
    let port: number;
    let alice: ScriptedBrowser;
    /** A connection held by each worker: `a` revokes, `b` is the other worker. */
    let a: Pinned;
    let b: Pinned;

    beforeAll(async () => {
      port = Number(new URL(portal).port);
      alice = await signIn(portal);
      const held = await connectionPerWorker(port, gatehouse.pid!);
      expect(held).toHaveLength(2);
      [a, b] = held as [Pinned, Pinned];
    });
    afterAll(() => {
      a?.close();
      b?.close();
    });

    /** A session of someone else's, cached by worker B, and how Alice revokes it through worker A. */
    async function cachedOnB(): Promise<{ cookie: string; revoke(): Promise<number> }> {
      const other = await signIn(portal);
      const cookie = sessionCookie(other);
      expect(await b.request('GET', '/api/session', { cookie })).toBe(200);
      expect(await b.request('GET', '/api/session', { cookie })).toBe(200);
      const { session } = JSON.parse((await other.request(`${portal}/api/session`)).body) as { session: { id: string } };
      const { csrfToken } = JSON.parse((await alice.request(`${portal}/api/csrf`)).body) as { csrfToken: string };
      return {
        cookie,
        revoke: () => a.request('DELETE', `/api/me/sessions/${session.id}`, { cookie: sessionCookie(alice), origin: portal, 'x-csrf-token': csrfToken }),
      };
    }

    // Threat: a revoked session let in by another worker between the revocation's answer and that
    // worker hearing of it: the person who revoked it believes it is over.
    it('the very next request to another worker is refused', async () => {
      const { cookie, revoke } = await cachedOnB();
      expect(await revoke()).toBe(204);
      expect(await b.request('GET', '/api/session', { cookie })).toBe(401);
      expect(running.output()).not.toContain('before every worker had acted on it');
    });

    // Threat: a worker whose event loop stalled serving a revoked session from its cache when it wakes,
    // before it has read the revocation waiting for it.
    it('a worker that does not answer in time is named in the log, and refuses the session when it wakes', async () => {
      const { cookie, revoke } = await cachedOnB();
      process.kill(b.worker, 'SIGSTOP');
      let status: number;
      try {
        // Answered after the deadline, without worker B.
        status = await revoke();
      } finally {
        process.kill(b.worker, 'SIGCONT');
      }
      expect(status).toBe(204);
      // Whatever B reads first on waking (this request or the revocation), it does not let the session in.
      expect(await b.request('GET', '/api/session', { cookie })).toBe(401);
      await running.waitFor('before every worker had acted on it');
      const warning = running
        .output()
        .split('\n')
        .find((line) => line.includes('before every worker had acted on it'))!;
      expect((JSON.parse(warning) as { late: number[] }).late).toEqual([b.worker]);
      // Awake again and caught up, B serves from its cache once more: nothing stays slow.
      expect(await b.request('GET', '/api/session', { cookie: sessionCookie(alice) })).toBe(200);
    });

    // Threat: a stalled primary (which relays revocations) leaving every other worker's cache stale.
    it('with the primary stalled, the revocation is still answered, and the other workers read from the store', async () => {
      const { cookie, revoke } = await cachedOnB();
      process.kill(gatehouse.pid!, 'SIGSTOP');
      try {
        expect(await revoke()).toBe(204);
        expect(await b.request('GET', '/api/session', { cookie })).toBe(401);
        // Alice's own session is read from the store too, and still good.
        expect(await b.request('GET', '/api/session', { cookie: sessionCookie(alice) })).toBe(200);
      } finally {
        process.kill(gatehouse.pid!, 'SIGCONT');
      }
      await running.waitFor('did not confirm a revocation');
    });
  });

  it('a worker that dies is started again, and the node keeps answering meanwhile', async () => {
    const workers = workersOf(gatehouse.pid!);
    expect(workers).toHaveLength(2);
    process.kill(workers[0]!, 'SIGKILL');
    await running.waitFor('a worker stopped unexpectedly', 5_000);
    // Once the primary knows (a connection handed over at the very moment of the crash is lost with
    // the worker: node:cluster's own limit), the other worker answers everything meanwhile.
    for (let i = 0; i < 4; i++) expect(await get(`${portal}/healthz`, '')).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(workersOf(gatehouse.pid!)).toHaveLength(2);
  });
});
