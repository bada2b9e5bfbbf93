import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Answer } from './http.js';
import { percentile } from './stats.js';

/**
 * Revocation across two nodes, end to end over HTTP: a session is revoked on node A through the account
 * API, as its user would from the account page (`DELETE /api/me/sessions/<id>` with the portal cookie,
 * Origin and CSRF token), while node B is asked for that session's forward-auth check back to back, one
 * request at a time on a kept-alive connection. B has the session cached (it answered the check twice
 * before), so it refuses (401) only once A's change notification reached it: without it, B's cache would
 * answer 200 until the entry's expiry (a minute). The time is from the moment the DELETE is sent to the
 * moment B's first refusal arrives, so it includes A's own work (the revoking UPDATE and the NOTIFY)
 * and one poll's round trip at most of waiting; each sample is a session of its own.
 */
export interface PropagationResult {
  samples: number;
  /** Revocations B never refused within the limit (5 s): a change lost. */
  missed: number;
  /** Milliseconds from the DELETE sent to B's first refusal. */
  refused: { p50: number; p90: number; p99: number; max: number };
  /** Milliseconds from the DELETE sent to A's answer (204). */
  answered: { p50: number; p99: number };
  /** Forward-auth requests B answered while waiting, per sample (median): the polling's resolution. */
  pollsPerSample: number;
}

interface Node {
  port: number;
}

export async function measurePropagation(input: {
  nodeA: Node;
  nodeB: Node;
  /** The portal's origin (both nodes answer for it) and host. */
  portalOrigin: string;
  /** `gatehouse_session=…` of the user whose sessions these are. */
  portalCookie: string;
  appId: string;
  appHost: string;
  sessions: Array<{ id: string; token: string }>;
}): Promise<PropagationResult> {
  const portalHost = new URL(input.portalOrigin).host;
  const agentA = new Agent({ keepAlive: true, maxSockets: 1 });
  const agentB = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const csrf = await get(agentA, input.nodeA.port, '/api/csrf', { host: portalHost, cookie: input.portalCookie });
    if (csrf.status !== 200) throw new Error(`propagation: GET /api/csrf on node A answered ${csrf.status} ${csrf.body.slice(0, 200)}`);
    const csrfToken = (JSON.parse(csrf.body) as { csrfToken: string }).csrfToken;
    const forwardAuth = (token: string) =>
      get(agentB, input.nodeB.port, `/.gatehouse/auth/${input.appId}`, {
        host: `127.0.0.1:${input.nodeB.port}`,
        'x-forwarded-proto': 'http',
        'x-forwarded-host': input.appHost,
        'x-forwarded-uri': '/',
        'x-forwarded-method': 'GET',
        cookie: `gatehouse_app=${token}`,
      });

    const refused: number[] = [];
    const answered: number[] = [];
    const polls: number[] = [];
    let missed = 0;
    for (const session of input.sessions) {
      for (let i = 0; i < 2; i++) {
        const warm = await forwardAuth(session.token);
        if (warm.status !== 200) throw new Error(`propagation: node B answered ${warm.status} for a live session before its revocation`);
      }
      let revokedAt = 0;
      let stop = false;
      const poll = (async () => {
        let count = 0;
        for (;;) {
          const answer = await forwardAuth(session.token);
          const at = performance.now();
          count++;
          if (answer.status === 401) return { at, count };
          if (answer.status !== 200) throw new Error(`propagation: node B answered ${answer.status} while the session was being revoked (expected 200, then 401)`);
          if (stop) return { at: Number.NaN, count };
        }
      })();
      // Its failure is thrown where it is awaited, below, not as an unhandled rejection meanwhile.
      poll.catch(() => undefined);
      // The poller is on its way: revoke on node A.
      revokedAt = performance.now();
      const revoke = await send(agentA, input.nodeA.port, 'DELETE', `/api/me/sessions/${encodeURIComponent(session.id)}`, {
        host: portalHost,
        origin: input.portalOrigin,
        cookie: input.portalCookie,
        'x-csrf-token': csrfToken,
      });
      const answeredAt = performance.now();
      if (revoke.status !== 204) throw new Error(`propagation: node A answered the revocation with ${revoke.status} ${revoke.body.slice(0, 200)}`);
      const limit = setTimeout(() => (stop = true), 5_000);
      const { at, count } = await poll;
      clearTimeout(limit);
      answered.push(answeredAt - revokedAt);
      polls.push(count);
      if (Number.isNaN(at)) missed++;
      else refused.push(at - revokedAt);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const sorted = Float64Array.from(refused).sort();
    const sortedAnswers = Float64Array.from(answered).sort();
    return {
      samples: input.sessions.length,
      missed,
      refused: { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? Number.NaN },
      answered: { p50: percentile(sortedAnswers, 50), p99: percentile(sortedAnswers, 99) },
      pollsPerSample: percentile(Float64Array.from(polls).sort(), 50),
    };
  } finally {
    agentA.destroy();
    agentB.destroy();
  }
}

function get(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return send(agent, port, 'GET', path, headers);
}

function send(agent: Agent, port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method, headers, agent, timeout: 10_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} 127.0.0.1:${port}${path}: no answer within 10 s`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
