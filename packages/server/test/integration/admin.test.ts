import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField } from '../../src/admin/auditRoutes.js';
import { ScriptedBrowser } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { formAction } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startUpstream } from './support/upstream.js';

/** The admin API against the real development IdP: role checks, CSRF, suspension, paging, audit. */
let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  gatehouse = await startGatehouse({
    port,
    admins: { groups: [{ provider: 'dev', group: 'admins' }] },
    apps: [{ id: 'cfg', name: 'Config app', publicUrl: `http://cfg.localhost:${port}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } }],
    providers: [{ id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'], pushedAuthorizationRequests: 'never' }],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

async function signIn(login: string, password: string) {
  const browser = new ScriptedBrowser(['reports.localhost', 'cfg.localhost', 'ops.localhost']);
  const first = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`), (url) => url.pathname.startsWith('/.gatehouse/callback/'));
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, (url) => url.pathname.startsWith('/.gatehouse/callback/'))).stoppedAt;
  }
  const done = await browser.request(callback!.href);
  const csrf = JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string;
  const me = JSON.parse((await browser.request(`${portal}/api/session`)).body);
  return { browser, csrf, me, done };
}

/** Opens an app URL in a browser already signed in at the portal (handshake included); the final status. */
async function openThroughPortal(browser: ScriptedBrowser, url: string): Promise<number> {
  const first = await browser.request(url, { headers: { accept: 'text/html' } });
  return (await browser.follow(first)).hop.status;
}

const send = (browser: ScriptedBrowser, method: string, path: string, csrf?: string, body?: unknown) =>
  browser.request(`${portal}${path}`, {
    method,
    headers: { origin: portal, ...(csrf ? { 'x-csrf-token': csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

describe('admin API', () => {
  it('admins by config group; /api/session says so', async () => {
    const alice = await signIn('alice@example.com', 'alice');
    expect(alice.me.user.admin).toBe(true);
    const bob = await signIn('bob@example.com', 'bob');
    expect(bob.me.user.admin).toBe(false);
  });

  // Threat: privilege escalation. Every admin route refuses non-admins, and every change needs CSRF proof.
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/api/admin/dashboard'],
    ['GET', '/api/admin/users'],
    ['GET', '/api/admin/users/x'],
    ['POST', '/api/admin/users/x/suspend'],
    ['POST', '/api/admin/users/x/reactivate'],
    ['PUT', '/api/admin/users/x/admin', { admin: true }],
    ['DELETE', '/api/admin/sessions/x'],
    ['GET', '/api/admin/audit'],
    ['GET', '/api/admin/audit.csv'],
    ['GET', '/api/admin/apps'],
    ['POST', '/api/admin/apps', { id: 'x' }],
    ['PUT', '/api/admin/apps/x', { name: 'x' }],
    ['DELETE', '/api/admin/apps/x'],
    ['POST', '/api/admin/policy-test', { appId: 'x', subject: { email: 'a@b.example' } }],
    ['GET', '/api/admin/providers'],
    ['POST', '/api/admin/providers/discover', { issuer: 'https://idp.example.com' }],
    ['POST', '/api/admin/providers', { id: 'x' }],
    ['PUT', '/api/admin/providers/x', { name: 'x' }],
    ['POST', '/api/admin/providers/x/enable'],
    ['POST', '/api/admin/providers/x/disable'],
    // Threat: anyone but an admin publishing an untested provider to everyone's sign-in page.
    ['POST', '/api/admin/providers/x/publish', { untested: true }],
    ['DELETE', '/api/admin/providers/x'],
    ['GET', '/api/admin/providers/x/tests/y'],
    ['GET', '/api/admin/sign-in-settings'],
    ['PUT', '/api/admin/sign-in-settings', { allowedDomains: [], createUsers: true }],
    ['GET', '/api/admin/config'],
  ];
  it.each(routes)('%s %s: 401 signed out, 403 for bob, CSRF for changes', async (method, path, body) => {
    expect((await send(new ScriptedBrowser(), method, path, undefined, body)).status).toBe(401);
    const bob = await signIn('bob@example.com', 'bob');
    const refused = await send(bob.browser, method, path, bob.csrf, body);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).code).toBe('forbidden');
    if (method !== 'GET') {
      const alice = await signIn('alice@example.com', 'alice');
      const noToken = await send(alice.browser, method, path, undefined, body);
      expect(noToken.status).toBe(403);
      expect(JSON.parse(noToken.body).code).toBe('csrf_failed');
      const wrongOrigin = await alice.browser.request(`${portal}${path}`, { method, headers: { origin: 'http://localhost:1', 'x-csrf-token': alice.csrf } });
      expect(wrongOrigin.status).toBe(403);
    }
  });

  it('pages through thousands of users with server-side search', async () => {
    const now = Date.now();
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      id: `gen-${i}`,
      email: `user${String(i).padStart(4, '0')}@generated.example`,
      name: `Generated ${i}`,
      picture: null,
      status: 'active' as const,
      roles: '[]',
      primary_identity_id: null,
      created_at: now,
      updated_at: now,
      last_sign_in_at: null,
    }));
    for (let i = 0; i < rows.length; i += 500) await gatehouse.services.database.db.insertInto('users').values(rows.slice(i, i + 500)).execute();
    const alice = await signIn('alice@example.com', 'alice');
    const page2 = JSON.parse((await alice.browser.request(`${portal}/api/admin/users?page=2&pageSize=100`)).body);
    expect(page2.users).toHaveLength(100);
    expect(page2.total).toBeGreaterThanOrEqual(3000);
    const search = JSON.parse((await alice.browser.request(`${portal}/api/admin/users?query=user0042`)).body);
    expect(search.users.map((u: { email: string }) => u.email)).toEqual(['user0042@generated.example']);
    // LIKE wildcards in the search are literal.
    expect(JSON.parse((await alice.browser.request(`${portal}/api/admin/users?query=%25`)).body).total).toBe(0);
  });

  it('suspending bob ends his open session at once; he cannot sign in again until reactivated', async () => {
    const alice = await signIn('alice@example.com', 'alice');
    const bob = await signIn('bob@example.com', 'bob');
    expect(await send(alice.browser, 'POST', `/api/admin/users/${bob.me.user.id}/suspend`, alice.csrf).then((r) => r.status)).toBe(204);
    expect((await bob.browser.request(`${portal}/api/session`)).status).toBe(401);
    const again = await signIn('bob@example.com', 'bob');
    expect(again.done.status).toBe(403);
    expect(again.done.body).toContain('Your account is suspended');
    const detail = JSON.parse((await alice.browser.request(`${portal}/api/admin/users/${bob.me.user.id}`)).body);
    expect(detail.user.status).toBe('suspended');
    expect(detail.sessions).toEqual([]);
    expect(detail.events.find((e: { type: string }) => e.type === 'user_suspended').details).toMatchObject({ before: { status: 'active' }, after: { status: 'suspended' } });
    // His refused sign-in is in his own audit trail, with the reason.
    expect(detail.events.find((e: { type: string }) => e.type === 'sign_in_failed')).toMatchObject({ outcome: 'failure', details: { code: 'account_suspended', reason: 'account_suspended' } });
    expect(await send(alice.browser, 'POST', `/api/admin/users/${bob.me.user.id}/reactivate`, alice.csrf).then((r) => r.status)).toBe(204);
    expect((await signIn('bob@example.com', 'bob')).me.user.email).toBe('bob@example.com');
  });

  it('grants and removes the admin role, never the config-given one or the last admin', async () => {
    const alice = await signIn('alice@example.com', 'alice');
    const bob = await signIn('bob@example.com', 'bob');
    expect((await send(alice.browser, 'PUT', `/api/admin/users/${bob.me.user.id}/admin`, alice.csrf, { admin: true })).status).toBe(204);
    expect(JSON.parse((await bob.browser.request(`${portal}/api/session`)).body).user.admin).toBe(true);
    expect((await bob.browser.request(`${portal}/api/admin/users`)).status).toBe(200);
    const fromConfig = await send(bob.browser, 'PUT', `/api/admin/users/${alice.me.user.id}/admin`, bob.csrf, { admin: false });
    expect(JSON.parse(fromConfig.body).code).toBe('admin_from_config');
    expect((await send(alice.browser, 'PUT', `/api/admin/users/${bob.me.user.id}/admin`, alice.csrf, { admin: false })).status).toBe(204);
    expect((await bob.browser.request(`${portal}/api/admin/users`)).status).toBe(403);
  });

  it('audit log: filters, paging, CSV export; dashboard counts', async () => {
    const alice = await signIn('alice@example.com', 'alice');
    const signIns = JSON.parse((await alice.browser.request(`${portal}/api/admin/audit?type=sign_in&pageSize=5`)).body);
    expect(signIns.events.length).toBeGreaterThan(0);
    expect(signIns.events.every((e: { type: string }) => e.type === 'sign_in')).toBe(true);
    expect(signIns.events[0].actor.email).toMatch(/@example\.com$/);
    // The user filter takes an email as well as an id; an email that names nobody finds nothing (never everything).
    const byEmail = JSON.parse((await alice.browser.request(`${portal}/api/admin/audit?userId=${encodeURIComponent('Alice@Example.com')}&pageSize=50`)).body);
    const byId = JSON.parse((await alice.browser.request(`${portal}/api/admin/audit?userId=${alice.me.user.id}&pageSize=50`)).body);
    expect(byEmail.total).toBeGreaterThan(0);
    expect(byEmail.total).toBe(byId.total);
    const nobody = JSON.parse((await alice.browser.request(`${portal}/api/admin/audit?userId=${encodeURIComponent('nobody@example.com')}`)).body);
    expect(nobody.total).toBe(0);
    const csv = await alice.browser.request(`${portal}/api/admin/audit.csv?type=sign_in`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="gatehouse-audit-/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('time,type,outcome,actor,target,provider,app,ip,user_agent,details');
    expect(lines.slice(1).every((line) => line.split(',')[1] === 'sign_in')).toBe(true);
    const dashboard = JSON.parse((await alice.browser.request(`${portal}/api/admin/dashboard?range=24h`)).body);
    expect(dashboard.buckets).toHaveLength(24);
    expect(dashboard.totals.signIns).toBeGreaterThan(0);
    expect(dashboard.liveSessions).toBeGreaterThan(0);
    expect(JSON.parse((await alice.browser.request(`${portal}/api/admin/dashboard?range=7d`)).body).buckets).toHaveLength(7);
  });

  it('apps and policies in the console take effect at the next request; config apps are read-only', async () => {
    const upstream = await startUpstream();
    try {
      const alice = await signIn('alice@example.com', 'alice');
      const definition = {
        id: 'reports',
        name: 'Reports',
        publicUrl: `http://reports.localhost:${new URL(portal).port}`,
        upstream: upstream.url,
        policy: { allow: [{ groups: ['admins'] }] },
      };
      const bad = await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, { ...definition, policy: { allow: [{ roles: ['root'] }] } });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).detail).toContain('policy.allow[0].roles[0]');
      const notUrls = await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, { ...definition, upstream: 'not a url' });
      expect(notUrls.status).toBe(400);
      expect(JSON.parse(notUrls.body).detail).toContain('upstream: must be an absolute http(s) URL');
      // A host or an id another app has (here the config file's) is a conflict beside that field, not a malformed request.
      const clash = await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, { ...definition, id: 'other', publicUrl: `http://cfg.localhost:${new URL(portal).port}` });
      expect(clash.status).toBe(409);
      expect(clash.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(clash.body)).toMatchObject({
        code: 'conflict',
        field: 'publicUrl',
        detail: `An app in the configuration file ("cfg") already uses cfg.localhost:${new URL(portal).port}. Choose another.`,
      });
      const sameId = await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, { ...definition, id: 'cfg' });
      expect(sameId.status).toBe(409);
      expect(JSON.parse(sameId.body)).toMatchObject({ code: 'conflict', field: 'id', detail: 'An app in the configuration file already has the id "cfg". Choose another.' });
      expect((await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, definition)).status).toBe(201);

      // Where the read-only ones come from: no file here (the configuration was given, not read), said as null.
      const source = JSON.parse((await alice.browser.request(`${portal}/api/admin/config`)).body);
      expect(source.config).toMatchObject({ file: null, lastReload: null });
      const listed = JSON.parse((await alice.browser.request(`${portal}/api/admin/apps`)).body).apps;
      expect(listed.map((a: { id: string; source: string }) => [a.id, a.source])).toEqual([['cfg', 'config'], ['reports', 'console']]);
      expect((await send(alice.browser, 'DELETE', '/api/admin/apps/cfg', alice.csrf)).status).toBe(409);

      // The policy tester names the deciding rule.
      const bob = await signIn('bob@example.com', 'bob');
      const verdict = JSON.parse((await send(alice.browser, 'POST', '/api/admin/policy-test', alice.csrf, { appId: 'reports', userId: bob.me.user.id })).body);
      expect(verdict).toMatchObject({ allow: false, reason: 'denied: no allow rule matched' });
      const typed = JSON.parse((await send(alice.browser, 'POST', '/api/admin/policy-test', alice.csrf, { appId: 'reports', subject: { email: 'x@example.com', groups: ['admins'] } })).body);
      expect(typed).toMatchObject({ allow: true, reason: 'allowed by allow[0]: groups admins' });
      // A draft policy from the form is tested before it is saved, and the saved one is left as it was.
      const draft = { allow: [{ groups: ['admins'] }, { emails: ['bob@example.com'] }], deny: [] };
      const drafted = JSON.parse((await send(alice.browser, 'POST', '/api/admin/policy-test', alice.csrf, { appId: 'reports', userId: bob.me.user.id, policy: draft })).body);
      expect(drafted).toMatchObject({ allow: true, decidedBy: { list: 'allow', index: 1 } });
      const savedStill = JSON.parse((await send(alice.browser, 'POST', '/api/admin/policy-test', alice.csrf, { appId: 'reports', userId: bob.me.user.id })).body);
      expect(savedStill.allow).toBe(false);
      // Threat: a hand-made draft with a rule the policy language does not have is refused (400), never evaluated.
      const badDraft = await send(alice.browser, 'POST', '/api/admin/policy-test', alice.csrf, { appId: 'reports', userId: bob.me.user.id, policy: { allow: [{ roles: ['root'] }] } });
      expect(badDraft.status).toBe(400);
      expect(JSON.parse(badDraft.body).code).toBe('bad_request');

      // Through the proxy right away: alice allowed, bob denied; then open it to staff and bob gets in.
      const appUrl = `http://reports.localhost:${new URL(portal).port}/`;
      const open = async (who: { browser: ScriptedBrowser }) => {
        const first = await who.browser.request(appUrl, { headers: { accept: 'text/html' } });
        return (await who.browser.follow(first)).hop.status;
      };
      expect(await openThroughPortal(alice.browser, appUrl)).toBe(200);
      expect(await openThroughPortal(bob.browser, appUrl)).toBe(403);
      const changed = await send(alice.browser, 'PUT', '/api/admin/apps/reports', alice.csrf, { ...definition, policy: { allow: [{ groups: ['staff'] }] } });
      expect(changed.status).toBe(200);
      expect(await open(bob)).toBe(200);
      expect((await send(alice.browser, 'DELETE', '/api/admin/apps/reports', alice.csrf)).status).toBe(204);
      const events = JSON.parse((await alice.browser.request(`${portal}/api/admin/audit?appId=reports`)).body).events.map((e: { type: string }) => e.type);
      expect(events).toEqual(expect.arrayContaining(['app_created', 'app_updated', 'app_deleted', 'access_denied']));
    } finally {
      await upstream.close();
    }
  });

  // Access decisions are reused per session and app on the hot path; a role change must still count at once.
  it('a role granted or removed in the console counts at the next proxied request', async () => {
    const upstream = await startUpstream();
    try {
      const alice = await signIn('alice@example.com', 'alice');
      const bob = await signIn('bob@example.com', 'bob');
      const appUrl = `http://ops.localhost:${new URL(portal).port}/`;
      const definition = { id: 'ops', name: 'Ops', publicUrl: appUrl.slice(0, -1), upstream: upstream.url, policy: { allow: [{ roles: ['admin'] }] } };
      expect((await send(alice.browser, 'POST', '/api/admin/apps', alice.csrf, definition)).status).toBe(201);
      const open = async () => (await bob.browser.follow(await bob.browser.request(appUrl, { headers: { accept: 'text/html' } }))).hop.status;
      expect(await openThroughPortal(bob.browser, appUrl)).toBe(403);
      expect(await open()).toBe(403);
      expect((await send(alice.browser, 'PUT', `/api/admin/users/${bob.me.user.id}/admin`, alice.csrf, { admin: true })).status).toBe(204);
      expect(await open()).toBe(200);
      expect((await send(alice.browser, 'PUT', `/api/admin/users/${bob.me.user.id}/admin`, alice.csrf, { admin: false })).status).toBe(204);
      expect(await open()).toBe(403);
      expect((await send(alice.browser, 'DELETE', '/api/admin/apps/ops', alice.csrf)).status).toBe(204);
    } finally {
      await upstream.close();
    }
  });

  it('the admin pages are served to admins only', async () => {
    const bob = await signIn('bob@example.com', 'bob');
    const refused = await bob.browser.request(`${portal}/admin/users`, { headers: { accept: 'text/html' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('It needs an administrator');
    const alice = await signIn('alice@example.com', 'alice');
    expect((await alice.browser.request(`${portal}/admin`, { headers: { accept: 'text/html' } })).status).toBe(200);
  });
});

it('CSV fields are quoted and formula-safe', () => {
  expect(csvField('plain')).toBe('plain');
  expect(csvField('a,b')).toBe('"a,b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`);
  expect(csvField('-1')).toBe("'-1");
});
