import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startCluster, type Cluster, type NodeName } from '../../../../e2e/support/cluster.js';
import { formAction, ScriptedBrowser } from './support/browser.js';

/**
 * Faults of a two-node deployment, with real processes (support: e2e/support/cluster.ts): two
 * Gatehouse nodes from the built server on one PostgreSQL, behind nginx round-robin. A node killed
 * with SIGKILL under load, PostgreSQL restarted under traffic, and the connection that listens for
 * the other nodes' changes cut or gone silent. In each, Gatehouse may refuse (503) but never lets in
 * what it should not, loses nothing it said was done, and recovers without a restart.
 */

/** The cluster of the describe block running now (each starts its own). */
let cluster: Cluster;

// A failure report carries what nginx and both nodes logged.
beforeEach(({ onTestFailed }) => onTestFailed(() => console.error(cluster.logs())));

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

interface SignedIn {
  browser: ScriptedBrowser;
  /** The portal session's id, as /api/session names it. */
  sessionId: string;
  /** Cookie headers for the portal and the whoami app host. */
  portalCookie: string;
  appCookie: string;
}

/**
 * Signs in through nginx (whichever node it picks, or `node`) with the development IdP's login form,
 * then through the whoami app host's handshake. Returns undefined when a step was refused (a node
 * died under it): the sign-in did not complete.
 */
async function signIn(login: string, password: string, node?: NodeName): Promise<SignedIn | undefined> {
  const browser = new ScriptedBrowser([new URL(cluster.appUrl('whoami')).hostname]);
  if (node) {
    browser.setCookie('localhost', 'lb_node', node);
    browser.setCookie(new URL(cluster.appUrl('whoami')).hostname, 'lb_node', node);
  }
  const first = await browser.follow(await browser.request(`${cluster.portalUrl}/.gatehouse/sign-in/dev`), isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const action = formAction(first.hop.body);
    if (!action) return undefined;
    const posted = await browser.request(new URL(action, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  if (!callback) return undefined;
  const done = await browser.request(callback.href);
  if (done.status !== 303) return undefined;
  const session = await browser.request(`${cluster.portalUrl}/api/session`);
  if (session.status !== 200) return undefined;
  const { hop } = await browser.follow(await browser.request(`${cluster.appUrl('whoami')}/`, { headers: { accept: 'text/html' } }));
  if (hop.status !== 200) return undefined;
  return {
    browser,
    sessionId: (JSON.parse(session.body) as { session: { id: string } }).session.id,
    portalCookie: `gatehouse_session=${browser.cookie('localhost', 'gatehouse_session')}`,
    appCookie: `gatehouse_app=${browser.cookie(new URL(cluster.appUrl('whoami')).hostname, 'gatehouse_app')}`,
  };
}

async function mustSignIn(login: string, password: string, node?: NodeName): Promise<SignedIn> {
  const signedIn = await signIn(login, password, node);
  if (!signedIn) throw new Error(`${login} could not sign in:\n${cluster.logs()}`);
  return signedIn;
}

/** The session's answer at the portal's API and at the app host (JSON), on a node or through nginx's choice. */
function asSession(who: SignedIn, node?: NodeName) {
  return {
    api: () => send(`${cluster.portalUrl}/api/session`, { headers: { cookie: who.portalCookie, accept: 'application/json' }, node }),
    app: (accept = 'application/json') => send(`${cluster.appUrl('whoami')}/?format=json`, { headers: { cookie: who.appCookie, accept }, node }),
  };
}

/** Revokes `target` from `by`'s account center API (same person), through nginx. */
async function revoke(by: SignedIn, target: SignedIn, node?: NodeName) {
  const csrf = await send(`${cluster.portalUrl}/api/csrf`, { headers: { cookie: by.portalCookie }, node });
  if (csrf.status !== 200) return csrf;
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  return send(`${cluster.portalUrl}/api/me/sessions/${target.sessionId}`, {
    method: 'DELETE',
    headers: { cookie: by.portalCookie, origin: cluster.portalUrl, 'x-csrf-token': csrfToken },
    node,
  });
}

/** Each node's report of its change listener (its metrics listener's /readyz, as an operator reads it). */
async function listenerStatus(node: NodeName): Promise<string | undefined> {
  const answer = await fetch(cluster.nodes[node].readinessUrl).catch(() => undefined);
  return answer ? ((await answer.json()) as { checks?: { changes?: string } }).checks?.changes : undefined;
}

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${cluster.logs().slice(-6_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const NODES: readonly NodeName[] = ['a', 'b'];

describe('two nodes on one PostgreSQL, under faults', () => {
  beforeAll(async () => {
    cluster = await startCluster();
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  // Threat: a revocation made while a node's notification connection is down is never heard by it,
  // and its session cache lets the revoked session in until the entry expires (a stale allow).
  it('a cut notification connection flushes the caches: a session revoked meanwhile is refused on both nodes', async () => {
    const victim = await mustSignIn('alice@example.com', 'alice', 'a');
    const bystander = await mustSignIn('bob@example.com', 'bob', 'b');
    // Both nodes have both sessions in their caches, at the portal and at the app host.
    for (const node of NODES) {
      for (const who of [victim, bystander]) {
        expect((await asSession(who, node).api()).status).toBe(200);
        expect((await asSession(who, node).app()).status).toBe(200);
      }
    }

    // Every node's listening connection is cut, and the session is revoked behind Gatehouse's back
    // (an operator's SQL: no notification is sent for it at all), before any node has listened again.
    const cut = await cluster.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and (application_name = 'gatehouse-changes' or query ilike 'LISTEN%')`,
    );
    expect(cut).toHaveLength(2);
    await cluster.query(`select pg_terminate_backend(pid) from pg_stat_activity where pid = any($1::int[])`, [cut.map(({ pid }) => pid)]);
    await cluster.query(`update sessions set revoked_at = $1, revoked_reason = 'admin' where id = $2`, [Date.now(), victim.sessionId]);

    // Each node notices, says so, and listens again on a new connection.
    for (const node of NODES) {
      await waitFor(`node ${node} to notice`, async () => cluster.nodes[node].logs().includes('the change notification connection to PostgreSQL dropped'));
      await waitFor(`node ${node} to listen again`, async () => (await listenerStatus(node)) === 'listening');
    }
    const listeners = await cluster.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and application_name = 'gatehouse-changes'`);
    expect(listeners).toHaveLength(2);
    expect(listeners.map(({ pid }) => pid)).not.toEqual(expect.arrayContaining(cut.map(({ pid }) => pid)));

    // No stale allow: the revoked session is refused on both nodes, at the portal and at the app host;
    // the other session still works.
    for (const node of NODES) {
      expect((await asSession(victim, node).api()).status).toBe(401);
      expect((await asSession(victim, node).app()).status).toBe(401);
      expect((await asSession(bystander, node).api()).status).toBe(200);
      expect((await asSession(bystander, node).app()).status).toBe(200);
    }
  }, 60_000);

  // Threat: while the database is away, a node answering from its caches alone lets in a session
  // revoked just before (or an error page that is really an allow); and a node that needs a restart
  // to use its database again after an outage.
  it('PostgreSQL restarted mid-traffic: 503 store_unavailable during the gap, never an allow, and everything works again without a restart', async () => {
    const alice = await mustSignIn('alice@example.com', 'alice');
    const revoked = await mustSignIn('alice@example.com', 'alice');
    for (const node of NODES) for (const who of [alice, revoked]) expect((await asSession(who, node).app()).status).toBe(200);

    // Traffic through nginx all along: alice's API and app requests, alternating, as a browser and as a script.
    type Answer = { phase: 'before' | 'gap' | 'after'; kind: string; status: number; type: string; body: string };
    const answers: Answer[] = [];
    let phase: Answer['phase'] = 'before';
    let running = true;
    const traffic = (async () => {
      for (let i = 0; running; i++) {
        const started = phase;
        const kind = (['api', 'app-json', 'app-html'] as const)[i % 3]!;
        const request = kind === 'api' ? asSession(alice).api() : asSession(alice).app(kind === 'app-html' ? 'text/html' : 'application/json');
        const answer = await request.catch((error: Error) => ({ status: 0, headers: {} as Record<string, string>, body: error.message }));
        answers.push({ phase: started, kind, status: answer.status, type: String(answer.headers['content-type'] ?? ''), body: answer.body });
      }
    })();

    // The second session is revoked (on node A) just before the database goes away.
    expect((await revoke(alice, revoked, 'a')).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.postgres.pause();
    phase = 'gap';
    // Both nodes, during the gap: the revoked session is never let in; alice gets the catalogue's 503.
    const during: Array<{ who: string; node: NodeName; status: number; type: string; body: string }> = [];
    for (let round = 0; round < 3; round++) {
      for (const node of NODES) {
        for (const [who, session] of [['alice', alice], ['revoked', revoked]] as const) {
          for (const answer of [await asSession(session, node).api(), await asSession(session, node).app('text/html')]) {
            during.push({ who, node, status: answer.status, type: String(answer.headers['content-type'] ?? ''), body: answer.body });
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    phase = 'after';
    await cluster.postgres.resume();
    // Working again, without a restart of either node: the first request after the database is back.
    for (const node of NODES) {
      expect((await asSession(alice, node).api()).status).toBe(200);
      expect((await asSession(alice, node).app()).status).toBe(200);
      expect((await asSession(revoked, node).api()).status).toBe(401);
      expect((await asSession(revoked, node).app()).status).toBe(401);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    running = false;
    await traffic;

    // Never an allow in the gap, and every refusal is the catalogue's, as a page or a problem.
    expect(during.filter(({ status }) => status === 200)).toEqual([]);
    for (const answer of during) {
      expect(answer.status, JSON.stringify(answer)).toBe(503);
      expect(answer.body).toContain('store_unavailable');
    }
    const gap = answers.filter(({ phase }) => phase === 'gap');
    expect(gap.length).toBeGreaterThan(0);
    for (const answer of gap) {
      expect(answer.status, JSON.stringify(answer)).toBe(503);
      expect(answer.body).toContain('store_unavailable');
      if (answer.kind === 'app-html') expect(answer.type).toMatch(/^text\/html/);
      else expect(answer.type).toMatch(/^application\/problem\+json/);
    }
    // Around the gap: answered or refused by the catalogue, never a bare failure.
    for (const answer of answers) {
      if (answer.status !== 200) expect(answer.status === 503 && answer.body.includes('store_unavailable'), JSON.stringify(answer)).toBe(true);
    }
    expect(answers.filter(({ phase }) => phase === 'after').some(({ status }) => status === 200)).toBe(true);

    // The listeners came back by themselves, and a new sign-in works.
    for (const node of NODES) await waitFor(`node ${node} to listen again`, async () => (await listenerStatus(node)) === 'listening', 40_000);
    const again = await mustSignIn('bob@example.com', 'bob');
    for (const node of NODES) expect((await asSession(again, node).app()).status).toBe(200);
  }, 90_000);

  // Threat: a node crash that loses what the survivors need (sessions kept in one node's memory), or
  // an action answered as done whose audit event was never written.
  it('kill -9 of one node under load: the other keeps every session, and every completed sign-in and revocation is in the audit log', async () => {
    const people = [
      ['alice@example.com', 'alice'],
      ['bob@example.com', 'bob'],
    ] as const;
    const sessions = await Promise.all([...people, ...people].map(([login, password]) => mustSignIn(login, password)));

    let running = true;
    const reads: Array<{ status: number; body: string }> = [];
    // Authenticated reads, through nginx's round-robin, at the portal and at the app host.
    const readLoop = async (who: SignedIn) => {
      for (let i = 0; running; i++) {
        const answer = await (i % 2 ? asSession(who).api() : asSession(who).app()).catch((error: Error) => ({ status: 0, body: error.message }));
        reads.push({ status: answer.status, body: answer.body.slice(0, 300) });
      }
    };
    // Sign-ins and revocations meanwhile; what got its success answer is recorded.
    const completedSignIns: string[] = [];
    const completedRevocations: string[] = [];
    const changeLoop = async (login: string, password: string) => {
      while (running) {
        const fresh = await signIn(login, password).catch(() => undefined);
        if (!fresh) continue;
        completedSignIns.push(fresh.sessionId);
        const other = await signIn(login, password).catch(() => undefined);
        if (!other) continue;
        completedSignIns.push(other.sessionId);
        const answer = await revoke(fresh, other).catch(() => undefined);
        if (answer && answer.status >= 200 && answer.status < 300) completedRevocations.push(other.sessionId);
      }
    };
    const load = Promise.all([...sessions.map(readLoop), ...people.map(([login, password]) => changeLoop(login, password))]);

    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const beforeKill = reads.length;
    await cluster.nodes.a.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    running = false;
    await load;

    // Every authenticated read succeeded, those in flight when node A died included (nginx tries an
    // idempotent request again on node B), and the load went on after the kill.
    expect(reads.filter(({ status }) => status !== 200)).toEqual([]);
    expect(reads.length).toBeGreaterThan(beforeKill);
    expect(completedSignIns.length).toBeGreaterThan(0);
    // Node B alone holds every session: each one, signed in on either node, is still signed in.
    for (const who of sessions) {
      expect((await asSession(who, 'b').api()).status).toBe(200);
      expect((await asSession(who, 'b').app()).status).toBe(200);
    }

    // Nothing answered as done is missing from the audit log.
    const signInEvents = await cluster.query<{ session_id: string }>(`select session_id from audit_events where type = 'sign_in' and outcome = 'success'`);
    const logged = new Set(signInEvents.map(({ session_id }) => session_id));
    expect(completedSignIns.filter((id) => !logged.has(id))).toEqual([]);
    const revocationEvents = await cluster.query<{ details: string }>(`select details from audit_events where type = 'session_revoked'`);
    const revokedLogged = new Set(revocationEvents.map(({ details }) => (JSON.parse(details) as { sessionId?: string }).sessionId));
    expect(completedRevocations.filter((id) => !revokedLogged.has(id))).toEqual([]);
  }, 60_000);
});

/**
 * A TCP relay between the nodes and PostgreSQL that can freeze the connections the nodes listen on
 * (recognised by their application_name in the startup message): nothing is delivered either way, and
 * no FIN or RST is sent — what a partition, or a NAT or firewall that forgot the connection, looks
 * like to the node. Every other connection is relayed untouched.
 */
async function startListenerRelay() {
  let target = 0;
  let frozen = false;
  const listening = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    let first = true;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (first && chunk.includes('gatehouse-changes')) listening.add(client);
      first = false;
      if (!(frozen && listening.has(client))) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!(frozen && listening.has(client))) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    /** The database URL through the relay. */
    via(databaseUrl: string): string {
      const url = new URL(databaseUrl);
      target = Number(url.port);
      url.port = String((server.address() as AddressInfo).port);
      return url.href;
    },
    freeze: () => void (frozen = true),
    thaw: () => void (frozen = false),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('two nodes whose notification connections go silent', () => {
  let relay: Awaited<ReturnType<typeof startListenerRelay>>;

  beforeAll(async () => {
    relay = await startListenerRelay();
    cluster = await startCluster({ nodesDatabaseUrl: (url) => relay.via(url) });
  }, 90_000);

  afterAll(async () => {
    relay?.thaw();
    await cluster?.stop();
    await relay?.close();
  });

  // Threat: a listening connection that died without a word looks open while notifications no longer
  // arrive; a node that went on trusting its cache would let a revoked session in for as long as the
  // silence lasts. (Until a heartbeat goes unanswered — its interval plus a second, events/pgChanges.ts
  // — the other node still answers from its cache: that window, about 2 s, is the bound, not zero.)
  it('is found dead by the heartbeat: caches flushed and bypassed, a session revoked meanwhile refused, listening again once it answers', async () => {
    const admin = await mustSignIn('alice@example.com', 'alice', 'a');
    const victim = await mustSignIn('alice@example.com', 'alice', 'a');
    const bystander = await mustSignIn('bob@example.com', 'bob', 'b');
    for (const node of NODES) for (const who of [victim, bystander]) expect((await asSession(who, node).app()).status).toBe(200);

    relay.freeze();
    expect((await revoke(admin, victim, 'a')).status).toBe(204);
    // The node that revoked knows at once; the other one finds its connection dead, flushes and
    // bypasses its caches until it listens again (its new connections stay silent too meanwhile).
    for (const node of NODES) await waitFor(`node ${node} to find its listener dead`, async () => (await listenerStatus(node)) === 'reconnecting', 30_000);
    for (const node of NODES) {
      expect((await asSession(victim, node).api()).status).toBe(401);
      expect((await asSession(victim, node).app()).status).toBe(401);
      expect((await asSession(bystander, node).app()).status).toBe(200);
    }

    relay.thaw();
    for (const node of NODES) await waitFor(`node ${node} to listen again`, async () => (await listenerStatus(node)) === 'listening', 40_000);
    for (const node of NODES) {
      expect((await asSession(victim, node).app()).status).toBe(401);
      expect((await asSession(bystander, node).api()).status).toBe(200);
    }
  }, 90_000);
});
