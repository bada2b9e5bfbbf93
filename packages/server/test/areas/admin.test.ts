import { fillPath, routes, type RouteDefinition } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserDirectory } from '../../src/accounts/userDirectory.js';
import { reviewAdmission } from '../../src/sessions/admissionReview.js';
import { adminArea } from '../../src/admin/index.js';
import { ProviderStore } from '../../src/providers/providerStore.js';
import { AppStore } from '../../src/apps/appStore.js';
import { ClientSecretStore } from '../../src/apps/clientSecretStore.js';
import { RunningConfig } from '../../src/config/running.js';
import { createTokenCipher } from '../../src/sessions/tokenCipher.js';
import { loadSecrets } from '../../src/secrets.js';
import { areaHarness, PORTAL, type AreaHarness, type Person } from '../support/areaHarness.js';

/** Every admin route of the contract, with its parameters filled in. */
const adminRoutes: Array<[string, RouteDefinition, string]> = Object.entries(routes.admin).map(([name, route]) => [
  name,
  route,
  fillPath(route.path, { userId: 'u1', sessionId: 's1', appId: 'wiki', providerId: 'dev', testId: 't1', secretId: 's1', grantId: 'g1' }),
]);

/**
 * The admin console's API registered alone with what its door declares, on real stores in an
 * in-memory database: who may call it, and a few of the changes it makes.
 */
describe('the admin area, alone', () => {
  let harness: AreaHarness;
  let admin: Person;
  let bob: Person;

  beforeAll(async () => {
    harness = await areaHarness({ admins: { emails: [] } }, async (parts, app) => {
      const log = app.log;
      const cipher = createTokenCipher(loadSecrets(parts.config));
      const appStore = new AppStore(parts.database.db, parts.apps, PORTAL, undefined, log);
      const providerStore = new ProviderStore({ db: parts.database.db, registry: parts.providers, cipher, accounts: parts.accounts, log });
      await app.register(adminArea, {
        portalOrigin: PORTAL,
        accounts: parts.accounts,
        directory: new UserDirectory(parts.database.db, parts.config.admins, parts.providers),
        sessions: parts.sessions,
        changes: parts.changes,
        audit: parts.audit,
        apps: parts.apps,
        appStore,
        clientSecrets: new ClientSecretStore(parts.database.db, parts.apps),
        providers: parts.providers,
        providerStore,
        signInSettings: parts.signInSettings,
        reviewAdmission: (scope, cause) =>
          reviewAdmission({ sessions: parts.sessions, audit: parts.audit, providers: parts.providers, organization: () => parts.signInSettings.get(), log }, scope, cause),
        // Reached only past the guard: a call here would answer 500, never the 401/403 asserted below.
        reloadConfig: () => Promise.reject(new Error('a reload must not be reached by this request')),
        running: new RunningConfig(parts.config, undefined),
        grants: parts.opStore,
        endGrants: (filter, reason) => parts.opStore.revokeGrants(filter, reason),
      });
    });
    admin = await harness.signIn('root@example.com', { roles: ['admin'] });
    bob = await harness.signIn('bob@example.com');
  });
  afterAll(() => harness?.close());

  // Threat: the console's API reached by someone who is not (or no longer) an admin.
  it.each(adminRoutes)('%s: 401 for nobody and 403 for a person who is not an admin, whatever the request', async (_name, route, url) => {
    const nobody = await harness.app.inject({ method: route.method, url, payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
    expect(nobody.statusCode).toBe(401);
    const notAdmin = await harness.app.inject({ method: route.method, url, headers: bob.changeHeaders, payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
    expect(notAdmin.statusCode).toBe(403);
    expect(notAdmin.json()).toMatchObject({ code: 'forbidden' });
  });

  // Threat: an admin's browser made to change things by another page (CSRF).
  it.each(adminRoutes.filter(([, route]) => route.method !== 'GET'))('%s: no change without the CSRF token and the portal’s Origin', async (_name, route, url) => {
    const answer = await harness.app.inject({ method: route.method, url, headers: { cookie: admin.cookie, origin: PORTAL }, payload: route.method === 'DELETE' ? undefined : {} });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ code: 'csrf_failed' });
  });

  it('lists users with the shape the contract gives, searched and paged', async () => {
    const answer = await harness.app.inject({ method: 'GET', url: '/api/admin/users?query=bob&pageSize=10', headers: { cookie: admin.cookie } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({
      users: [{ id: bob.userId, email: 'bob@example.com', name: 'Person 2', status: 'active', admin: false, adminFromConfig: false, createdAt: expect.any(String), lastSignInAt: expect.any(String), activeSessions: 1 }],
      total: 1,
      page: 1,
      pageSize: 10,
    });
  });

  it('suspends a user: their sessions end and the change is recorded with its actor', async () => {
    const carol = await harness.signIn('carol@example.com');
    const answer = await harness.app.inject({ method: 'POST', url: `/api/admin/users/${carol.userId}/suspend`, headers: admin.changeHeaders });
    expect(answer.statusCode).toBe(204);
    expect((await harness.sessions.findById(carol.sessionId))?.revoked_at).not.toBeNull();
    expect((await harness.accounts.getUser(carol.userId))?.status).toBe('suspended');
    const detail = await harness.app.inject({ method: 'GET', url: `/api/admin/users/${carol.userId}`, headers: { cookie: admin.cookie } });
    expect(detail.json().events[0]).toMatchObject({ type: 'user_suspended', actor: { id: admin.userId, email: 'root@example.com' }, target: { id: carol.userId, email: 'carol@example.com' } });
  });

  it('keeps the last admin: removing the only one is a 409, granting then removing another works', async () => {
    const own = await harness.app.inject({ method: 'PUT', url: `/api/admin/users/${admin.userId}/admin`, headers: admin.changeHeaders, payload: { admin: false } });
    expect(own.statusCode).toBe(409);
    expect(own.json()).toMatchObject({ code: 'last_admin' });
    const grant = await harness.app.inject({ method: 'PUT', url: `/api/admin/users/${bob.userId}/admin`, headers: admin.changeHeaders, payload: { admin: true } });
    expect(grant.statusCode).toBe(204);
    const unknownField = await harness.app.inject({ method: 'PUT', url: `/api/admin/users/${bob.userId}/admin`, headers: admin.changeHeaders, payload: { admin: false, roles: ['admin'] } });
    expect(unknownField.statusCode).toBe(400);
    const remove = await harness.app.inject({ method: 'PUT', url: `/api/admin/users/${bob.userId}/admin`, headers: admin.changeHeaders, payload: { admin: false } });
    expect(remove.statusCode).toBe(204);
  });

  it('answers the dashboard with every count the contract names', async () => {
    const answer = await harness.app.inject({ method: 'GET', url: '/api/admin/dashboard?range=7d', headers: { cookie: admin.cookie } });
    expect(answer.statusCode).toBe(200);
    const body = answer.json();
    expect(body).toMatchObject({ range: '7d', users: 3, topDeniedApps: [] });
    expect(body.buckets).toHaveLength(7);
    expect(body.liveSessions).toBeGreaterThanOrEqual(2);
  });

  // Threat: a made-up filter value answered as if it meant something (an empty page that reads as "it never
  // happened"). The type filter takes only the types the server records (the contract's `auditEventTypes`).
  it('filters the audit log by a type the contract names, and refuses any other as a bad request', async () => {
    await harness.audit.record({ type: 'sign_out', actorUserId: bob.userId, targetUserId: bob.userId });
    const signOuts = await harness.app.inject({ method: 'GET', url: '/api/admin/audit?type=sign_out', headers: { cookie: admin.cookie } });
    expect(signOuts.statusCode).toBe(200);
    expect(signOuts.json().events.length).toBeGreaterThan(0);
    expect(signOuts.json().events.every((event: { type: string }) => event.type === 'sign_out')).toBe(true);
    // Empty is any type, as an absent filter is.
    const any = await harness.app.inject({ method: 'GET', url: '/api/admin/audit?type=', headers: { cookie: admin.cookie } });
    expect(any.statusCode).toBe(200);
    expect(any.json().total).toBeGreaterThan(signOuts.json().total);
    for (const url of ['/api/admin/audit?type=no_such_type', '/api/admin/audit?type=SIGN_OUT', '/api/admin/audit.csv?type=sign_out%20']) {
      const refused = await harness.app.inject({ method: 'GET', url, headers: { cookie: admin.cookie } });
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json(), url).toMatchObject({ code: 'bad_request' });
    }
  });

  it('creates an app nginx or Caddy serves, with no upstream, and tells where a proxy reaches Gatehouse and whom it believes', async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/api/admin/apps',
      headers: admin.changeHeaders,
      payload: { id: 'served-by-nginx', name: 'Served by nginx', publicUrl: 'http://hello.localhost:8080', policy: { allow: [{ groups: ['staff'] }] } },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).not.toHaveProperty('upstream');
    const listed = await harness.app.inject({ method: 'GET', url: '/api/admin/apps', headers: { cookie: admin.cookie } });
    expect(listed.json().apps.find((app: { id: string }) => app.id === 'served-by-nginx')).toMatchObject({ name: 'Served by nginx', source: 'console' });

    const setup = await harness.app.inject({ method: 'GET', url: '/api/admin/forward-auth', headers: { cookie: admin.cookie } });
    expect(setup.statusCode).toBe(200);
    const { listen, mode } = harness.config;
    expect(setup.json()).toEqual({
      gatehouseAddress: `${listen.host === 'localhost' ? '127.0.0.1' : listen.host}:${listen.port}`,
      trustedProxies: ['127.0.0.0/8', '::1'],
      trustedProxiesDefault: true,
      mode,
    });
  });

  it('an OpenID Connect app: its view carries guard and oidc; a secret is shown once, listed by hint, limited to two, revoked, and audited without itself', async () => {
    const definition = { id: 'grafana', name: 'Grafana', publicUrl: 'https://grafana.example.com', guard: false, policy: { allow: [{ anyUser: true }] }, oidc: { redirectUris: ['https://grafana.example.com/login/generic_oauth'] } };
    const created = await harness.app.inject({ method: 'POST', url: '/api/admin/apps', headers: admin.changeHeaders, payload: definition });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ guard: false, oidc: { clientId: 'grafana', authentication: 'client_secret_basic', scopes: ['openid', 'profile', 'email', 'groups'], secretsFromConfig: false } });
    const secrets = '/api/admin/apps/grafana/secrets';
    const made = await harness.app.inject({ method: 'POST', url: secrets, headers: admin.changeHeaders });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.headers['cache-control']).toBe('no-store');
    const { secret, id, hint } = made.json() as { secret: string; id: string; hint: string };
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hint).toBe(secret.slice(0, 4));
    const listed = await harness.app.inject({ method: 'GET', url: secrets, headers: { cookie: admin.cookie } });
    expect(listed.json()).toEqual({ secrets: [{ id, hint, createdAt: expect.any(String), createdBy: { id: admin.userId, email: 'root@example.com' } }] });
    // Threat: the one-time secret shown again (a list, the app's view, the audit log).
    for (const url of [secrets, '/api/admin/apps', '/api/admin/audit?pageSize=200']) {
      expect((await harness.app.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })).body, url).not.toContain(secret);
    }
    expect((await harness.app.inject({ method: 'POST', url: secrets, headers: admin.changeHeaders })).statusCode).toBe(201);
    const third = await harness.app.inject({ method: 'POST', url: secrets, headers: admin.changeHeaders });
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({ code: 'client_secret_limit' });
    expect(third.json().detail).toMatch(/revoke one/);
    const revoked = await harness.app.inject({ method: 'DELETE', url: `${secrets}/${id}`, headers: admin.changeHeaders });
    expect(revoked.statusCode).toBe(204);
    expect((await harness.app.inject({ method: 'DELETE', url: `${secrets}/${id}`, headers: admin.changeHeaders })).statusCode).toBe(404);
    const audit = await harness.app.inject({ method: 'GET', url: '/api/admin/audit?pageSize=200', headers: { cookie: admin.cookie } });
    const events = (audit.json() as { events: Array<{ type: string; details: unknown; appId: string | null }> }).events;
    expect(events.filter((event) => event.type === 'client_secret_created')).toHaveLength(2);
    expect(events.find((event) => event.type === 'client_secret_revoked')).toMatchObject({ appId: 'grafana', details: { id, hint } });
  });

  it('lists providers without any credential', async () => {
    const answer = await harness.app.inject({ method: 'GET', url: '/api/admin/providers', headers: { cookie: admin.cookie } });
    expect(answer.json().providers[0]).toMatchObject({ id: 'dev', hasClientSecret: true, source: 'config' });
    expect(answer.body).not.toContain('"clientSecret"');
    expect(answer.body).not.toContain('"y"');
  });
});
