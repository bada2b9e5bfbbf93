import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

// Threat: brute force and resource exhaustion through the sign-in endpoints. Start and callback share
// one budget per client address.
let gatehouse: RunningGatehouse;

beforeAll(async () => {
  gatehouse = await startGatehouse({
    signIn: { rateLimit: { max: 3, window: '1m' } },
    providers: [{ id: 'gone', name: 'Gone IdP', issuer: `http://127.0.0.1:${await freePort()}`, clientId: 'x', clientSecret: 'y' }],
  });
});
afterAll(() => gatehouse?.close());

it('answers 429 with Retry-After once start + callback exceed the budget', async () => {
  const start = () => fetch(`${gatehouse.url}/.gatehouse/sign-in/gone`, { redirect: 'manual' });
  const callback = () => fetch(`${gatehouse.url}/.gatehouse/callback/gone?state=x&code=y`, { redirect: 'manual' });
  expect((await start()).status).toBe(502);
  expect((await callback()).status).toBe(400);
  expect((await start()).status).toBe(502);
  const limited = await callback();
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await limited.text()).toContain('rate_limited');
  // Other endpoints are not affected.
  expect((await fetch(`${gatehouse.url}/healthz`)).status).toBe(200);
});
