import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningConfig } from '../../src/config/running.js';
import { healthRoutes } from '../../src/operations/health.js';
import { areaHarness, type AreaHarness, type Person } from '../support/areaHarness.js';

/**
 * Threat: information disclosure to strangers. The public `/readyz` answers on any Host, since load
 * balancers probe a node by its address; it answered everyone with the configuration file's path, the
 * problems of a refused reload and each IdP's error, which names internal hosts and ports. Anyone now
 * gets the status and its HTTP status, which is all a load balancer reads; each check is for a
 * signed-in admin of the portal (and the metrics listener's own /readyz, test/integration/metrics.test.ts).
 */
describe('the public /readyz', () => {
  let harness: AreaHarness;
  let member: Person;
  let admin: Person;

  beforeAll(async () => {
    harness = await areaHarness(
      // An IdP that cannot be reached, at an internal address: its error names it.
      { providers: [{ id: 'dev', name: 'Dev IdP', issuer: 'http://127.0.0.1:9/internal-idp', clientId: 'x', clientSecret: 'y' }] },
      async (parts, app) => {
        await app.register(healthRoutes, {
          database: parts.database,
          changes: parts.changes,
          providers: parts.providers,
          running: new RunningConfig(parts.config, '/etc/gatehouse/secret-path/gatehouse.yaml'),
          fromAdmin: async (request) => {
            const current = await request.currentSession();
            return current !== undefined && parts.isAdmin(current);
          },
        });
      },
    );
    member = await harness.signIn('member@example.com');
    admin = await harness.signIn('root@example.com', { roles: ['admin'] });
  });
  afterAll(() => harness?.close());

  const readyz = (headers: Record<string, string> = {}) => harness.app.inject({ method: 'GET', url: '/readyz', headers });

  it('tells a stranger the status alone, on any Host, and never lets a cache keep it', async () => {
    for (const host of ['localhost:4180', '10.0.0.7:4180', 'attacker.example']) {
      const answer = await readyz({ host });
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ status: 'ready' });
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.body).not.toMatch(/secret-path|127\.0\.0\.1|internal-idp|Dev IdP/);
    }
    // A cookie that is no session, or a session that is not an admin's, is a stranger's too.
    expect((await readyz({ cookie: 'gatehouse_session=forged' })).json()).toEqual({ status: 'ready' });
    expect((await readyz({ cookie: member.cookie })).json()).toEqual({ status: 'ready' });
  });

  it('shows a signed-in admin every check', async () => {
    const answer = await readyz({ cookie: admin.cookie });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toMatchObject({
      status: 'ready',
      checks: {
        database: 'ok',
        changes: 'local',
        providers: [{ id: 'dev', name: 'Dev IdP', availability: 'unavailable', error: expect.any(String) }],
        config: { file: '/etc/gatehouse/secret-path/gatehouse.yaml' },
      },
    });
  });
});
