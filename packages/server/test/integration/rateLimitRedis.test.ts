import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { createServices, type Services } from '../../src/services.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { freePort } from '../support/ports.js';
import { oidcApp } from './support/relyingParty.js';
import { createTestStore, removeTestStore, storeConfig } from './support/testStore.js';

/**
 * The sign-in rate limit counted in a shared Redis (cache.url): two Gatehouse nodes, one budget. Redis
 * failing holds no sign-in up, and never turns the limit off: each node counts on its own meanwhile
 * (with what it had counted before), with a warning; Redis back, the shared count resumes.
 *
 * Each test is a client of its own (X-Forwarded-For from a trusted proxy), so that each starts with a
 * fresh budget.
 */

const PASSWORD = 'redis-secret-Zq81';
const MAX = 5;
/** The budget of failed client authentications per address and minute (provide/clientAuthLimit.ts). */
const CLIENT_AUTH_MAX = 20;
const SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';

interface Node {
  url: string;
  services: Services;
  logs: Array<{ level: number; msg: string; [key: string]: unknown }>;
  close(): Promise<void>;
}

/** A Gatehouse node like startGatehouse's, with its log kept for the assertions. */
async function startNode(input: Partial<ConfigInput>): Promise<Node> {
  const port = await freePort();
  const store = await createTestStore();
  const config = parseConfig(
    { publicUrl: `http://localhost:${port}`, listen: { host: '127.0.0.1', port }, ...input, ...storeConfig(store) },
    { env: {} },
  );
  const logs: Node['logs'] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Node['logs'][number]) });
  const services = await createServices(config, log);
  const app: FastifyInstance = await buildApp(services, { loggerInstance: log });
  await app.listen({ host: '127.0.0.1', port });
  services.providers.start();
  return {
    url: `http://localhost:${port}`,
    services,
    logs,
    async close() {
      await app.close();
      await services.close();
      await removeTestStore(store);
    },
  };
}

async function until(condition: () => boolean, what: string, timeout = 10_000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const connected = (node: Node) => node.services.sharedLimits?.redis.status === 'ready';

/** A sign-in start (the IdP is unreachable: 502 when allowed), and how long it took to answer; from `client` when given. */
async function signIn(node: Node, client?: string): Promise<{ status: number; ms: number; retryAfter: string | null; body: string }> {
  const started = performance.now();
  const response = await fetch(`${node.url}/.gatehouse/sign-in/gone`, { redirect: 'manual', headers: client ? { 'x-forwarded-for': client } : {} });
  const body = await response.text();
  return { status: response.status, ms: performance.now() - started, retryAfter: response.headers.get('retry-after'), body };
}

async function providers(): Promise<ConfigInput['providers']> {
  return [{ id: 'gone', name: 'Gone IdP', issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x', clientSecret: 'y' }];
}

/** A client of the OpenID Provider, for the limit on failed client authentications. */
const apps = [oidcApp('grafana', 'Grafana', 'http://grafana.localhost', { secrets: [SECRET] })];

/** A token request of the app from `client`, with a wrong secret unless given the right one: its status and answer. */
async function token(node: Node, client: string, secret = `guess-${Math.random().toString(36).slice(2)}-0123456789abcdefghijklmnopqrstuvwxyz`) {
  const started = performance.now();
  const response = await fetch(`${node.url}/oidc/token`, {
    method: 'POST',
    headers: { 'x-forwarded-for': client },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'grafana', client_secret: secret }),
  });
  return { status: response.status, ms: performance.now() - started, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

describe('with a shared Redis', () => {
  let redis: RedisServer;
  let a: Node;
  let b: Node;

  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    const input = { signIn: { rateLimit: { max: MAX, window: '1m' } }, cache: { url: redis.url }, trustedProxies: ['127.0.0.1/8'], providers: await providers(), apps };
    [a, b] = await Promise.all([startNode(input), startNode(input)]);
    await until(() => connected(a) && connected(b), 'both nodes to connect to Redis');
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.close();
  });

  it('counts one budget across the nodes', async () => {
    // Threat: brute force spread over the nodes behind a load balancer. Counted per node, N nodes give
    // an attacker N times the budget; counted in Redis, the budget is the same whichever node answers.
    for (const node of [a, a, a, b, b]) expect((await signIn(node)).status).toBe(502);
    const limited = await signIn(b);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect(limited.body).toContain('rate_limited');
    expect((await signIn(a)).status).toBe(429);

    // The counts are under the configured prefix, one key per client address.
    const inspector = new Redis(redis.url, { lazyConnect: true });
    try {
      expect(await inspector.keys('*')).toEqual(['gatehouse:rate-limit:sign-in:127.0.0.1']);
    } finally {
      inspector.disconnect();
    }
  });

  it('counts failed client authentications in one budget across the nodes', async () => {
    // Threat: guessing a client secret at the token endpoints of several nodes: counted per node, N
    // nodes behind a load balancer give N times the budget.
    const client = '198.51.100.30';
    for (let i = 0; i < CLIENT_AUTH_MAX / 2; i++) for (const node of [a, b]) expect((await token(node, client)).status).toBe(401);
    // The next failure, on A (B counted the budget's last): past the budget, answered 429.
    const limited = await token(a, client);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect(JSON.parse(limited.body)).toMatchObject({ error: 'invalid_client' });
    // Both nodes now refuse the address before authenticating, the right secret too.
    for (const node of [b, a]) expect((await token(node, client, SECRET)).status).toBe(429);
    // Another address is another budget (its refresh token is what is refused).
    expect(JSON.parse((await token(b, '198.51.100.31', SECRET)).body)).toMatchObject({ error: 'invalid_grant' });

    // The count is under the configured prefix, beside the sign-in limit's.
    const inspector = new Redis(redis.url, { lazyConnect: true });
    try {
      expect(await inspector.get(`gatehouse:rate-limit:client-auth:${client}`)).toBe(String(CLIENT_AUTH_MAX + 1));
    } finally {
      inspector.disconnect();
    }
  });

  it('keeps counting, promptly, while Redis hangs, and says so', async () => {
    // Threat: a hung Redis turning the limiter into a denial of service of every sign-in (each one held
    // until a TCP timeout), or turning it off. A command is given up after 500 ms and this node's own
    // count decides.
    const client = '198.51.100.2';
    redis.pause();
    try {
      for (let i = 0; i < MAX; i++) {
        const answer = await signIn(a, client);
        expect(answer.status).toBe(502);
        expect(answer.ms).toBeLessThan(1_500);
      }
      const limited = await signIn(a, client);
      expect(limited.status).toBe(429);
      expect(limited.ms).toBeLessThan(1_500);
    } finally {
      redis.resume();
    }
    await until(() => a.logs.some((entry) => entry.level === 40 && /counts the rate limits on its own/.test(entry.msg)), 'a warning on node A');
  });

  // Regression: the limit failed open (unlimited sign-ins) while Redis was down.
  it('counts on each node, with what it counted before, while Redis is stopped; the warning names no password', async () => {
    // Threat: brute force that first makes Redis unreachable, then signs in without any limit; and
    // Redis's password, part of cache.url, leaking into the log.
    const client = '198.51.100.3';
    // Counted in Redis (3 of 5) and by each node itself (A: 2, B: 1).
    for (const node of [a, a, b]) expect((await signIn(node, client)).status).toBe(502);
    await redis.stop();
    await until(() => !connected(a) && !connected(b), 'both nodes to notice Redis is gone');
    // Each node now counts alone, from what it had counted: A allows 3 more, B 4 more, then neither.
    for (let i = 0; i < MAX - 2; i++) expect((await signIn(a, client)).status).toBe(502);
    const limitedA = await signIn(a, client);
    expect(limitedA.status).toBe(429);
    expect(Number(limitedA.retryAfter)).toBeGreaterThan(0);
    expect(limitedA.ms).toBeLessThan(500);
    for (let i = 0; i < MAX - 1; i++) expect((await signIn(b, client)).status).toBe(502);
    expect((await signIn(b, client)).status).toBe(429);
    expect((await signIn(a, client)).status).toBe(429);

    await until(() => b.logs.some((entry) => entry.level === 40 && /counts the rate limits on its own/.test(entry.msg)), 'a warning on node B');
    const warnings = b.logs.filter((entry) => entry.level === 40 && /Redis/.test(entry.msg));
    expect(warnings[0]?.error).toBeTypeOf('string');
    // At most one warning a minute, however many counts fail.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.redis).toBe(`redis://127.0.0.1:${redis.port}`);
    for (const node of [a, b]) expect(JSON.stringify(node.logs)).not.toContain(PASSWORD);
    // Nothing else depends on Redis.
    expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${a.url}/api/providers`)).status).toBe(200);
  });

  it('counts failed client authentications on each node while Redis is stopped', async () => {
    // Threat: guessing a client secret after making Redis unreachable, with no limit left.
    expect(connected(a)).toBe(false); // stopped by the test above
    const client = '198.51.100.32';
    const answers = [];
    for (let i = 0; i <= CLIENT_AUTH_MAX; i++) answers.push(await token(a, client));
    // Each counted at once in A's own memory (a count in Redis is refused while it is down): the budget, then 429.
    expect(answers.map((answer) => answer.status)).toEqual([...Array<number>(CLIENT_AUTH_MAX).fill(401), 429]);
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(500);
    expect((await token(a, client, SECRET)).status).toBe(429);
    // B counts on its own meanwhile: it saw none of these.
    expect((await token(b, client)).status).toBe(401);
  });

  it('counts in Redis again once it is back, and an emptied Redis resets no budget', async () => {
    // Threat: an attacker who once made Redis unreachable keeping the limit per node for good; or one
    // who gets Redis restarted (or flushed) to start a fresh budget.
    await redis.start(); // empty: nothing is saved
    await until(() => connected(a) && connected(b), 'both nodes to reconnect', 15_000);
    const client = '198.51.100.4';
    for (const node of [b, b, a, a, b]) expect((await signIn(node, client)).status).toBe(502);
    expect((await signIn(a, client)).status).toBe(429);
    expect((await signIn(b, client)).status).toBe(429);
    for (const node of [a, b]) expect(node.logs.some((entry) => entry.level === 30 && /answers again/.test(entry.msg))).toBe(true);
    // The client the nodes counted while Redis was down: Redis knows nothing of it now, each node does.
    expect((await signIn(a, '198.51.100.3')).status).toBe(429);
    expect((await signIn(b, '198.51.100.3')).status).toBe(429);
  });
});

describe('without Redis', () => {
  let a: Node;
  let b: Node;

  beforeAll(async () => {
    const input = { signIn: { rateLimit: { max: 2, window: '1m' } }, providers: await providers() };
    [a, b] = await Promise.all([startNode(input), startNode(input)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('each node counts on its own (as documented)', async () => {
    expect(a.services.sharedLimits).toBeUndefined();
    for (const node of [a, a, b, b]) expect((await signIn(node)).status).toBe(502);
    expect((await signIn(a)).status).toBe(429);
    expect((await signIn(b)).status).toBe(429);
  });
});
