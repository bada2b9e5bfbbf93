import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpGrant } from '../../src/provide/opStore.js';
import { formAction, ScriptedBrowser } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/**
 * The apps signed in with Gatehouse, seen and ended by the person (the account center) and by admins
 * (the console), on a real Gatehouse with people signed in through the development IdP. The grants are
 * recorded in the OpenID Provider's store as its login step records them, in the person's real session.
 */
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
    apps: [
      { id: 'grafana', name: 'Grafana', publicUrl: `http://grafana.localhost:${port}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } },
      { id: 'gitea', name: 'Gitea', publicUrl: `http://gitea.localhost:${port}`, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } },
    ],
    providers: [{ id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'], pushedAuthorizationRequests: 'never' }],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

interface SignedIn {
  browser: ScriptedBrowser;
  csrf: string;
  userId: string;
  sessionId: string;
}

async function signIn(login: string, password: string): Promise<SignedIn> {
  const browser = new ScriptedBrowser();
  const first = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`), (url) => url.pathname.startsWith('/.gatehouse/callback/'));
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, (url) => url.pathname.startsWith('/.gatehouse/callback/'))).stoppedAt;
  }
  await browser.request(callback!.href);
  const csrf = JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string;
  const me = JSON.parse((await browser.request(`${portal}/api/session`)).body);
  return { browser, csrf, userId: me.user.id, sessionId: me.session.id };
}

const send = (person: SignedIn, method: string, path: string, headers: Record<string, string> = { origin: portal, 'x-csrf-token': person.csrf }) =>
  person.browser.request(`${portal}${path}`, { method, headers });
const get = async (person: SignedIn, path: string) => {
  const answer = await person.browser.request(`${portal}${path}`);
  return { status: answer.status, body: JSON.parse(answer.body) };
};

let grants = 0;
/** A grant of `appId` made in the person's session, as the OpenID Provider's login step records it. */
function grantFor(person: SignedIn, appId: string, scopes = ['openid', 'profile', 'email', 'groups']): Promise<OpGrant> {
  const n = ++grants;
  return gatehouse.services.opStore.recordGrant({
    grantId: `grant-${n}-${appId}`,
    clientId: appId,
    appId,
    userId: person.userId,
    sessionId: person.sessionId,
    sid: `sid-${n}`,
    subject: `subject-${person.userId}`,
    scopes,
    expiresAt: Date.now() + 3_600_000,
  });
}

describe('the apps signed in with Gatehouse', () => {
  let alice: SignedIn;
  let bob: SignedIn;

  beforeAll(async () => {
    alice = await signIn('alice@example.com', 'alice');
    bob = await signIn('bob@example.com', 'bob');
  });

  it('lists, in each of the person’s sessions, the apps signed in with Gatehouse there, and only theirs', async () => {
    const grafana = await grantFor(bob, 'grafana');
    const gitea = await grantFor(bob, 'gitea', ['openid', 'email', 'offline_access']);
    const alices = await grantFor(alice, 'grafana');
    const { status, body } = await get(bob, '/api/me/sessions');
    expect(status).toBe(200);
    const [session] = body.sessions;
    expect(session).toMatchObject({ id: bob.sessionId, current: true });
    // In the apps' names' order.
    expect(session.apps).toEqual([
      { grantId: gitea.grantId, app: { id: 'gitea', name: 'Gitea' }, signedInAt: expect.any(String), lastUsedAt: expect.any(String), scopes: ['openid', 'email', 'offline_access'] },
      { grantId: grafana.grantId, app: { id: 'grafana', name: 'Grafana' }, signedInAt: expect.any(String), lastUsedAt: expect.any(String), scopes: ['openid', 'profile', 'email', 'groups'] },
    ]);
    expect(JSON.stringify(body)).not.toContain(alices.grantId);
    // Nothing of the OpenID Provider's bearer values, nor the subject or sid an app knows the person by.
    expect(JSON.stringify(body)).not.toMatch(/subject-|sid-/);
  });

  it('ends one app’s sign-in at the person’s word: its tokens go, the others stay, the audit log and the activity say so', async () => {
    const grant = await grantFor(bob, 'grafana');
    const other = await grantFor(bob, 'gitea');
    // A refresh token of the grant, as oidc-provider stores it.
    await gatehouse.services.opStore.savePayload('RefreshToken', `rt-${grant.grantId}`, { payload: '{}', grantId: grant.grantId, expiresIn: 3600 });

    const answer = await send(bob, 'DELETE', `/api/me/grants/${grant.grantId}`);
    expect(answer.status).toBe(204);
    expect(await gatehouse.services.opStore.grant(grant.grantId)).toMatchObject({ revokedAt: expect.any(Number), revokedReason: 'revoked-by-user' });
    expect(await gatehouse.services.opStore.findPayload('RefreshToken', `rt-${grant.grantId}`)).toBeUndefined();
    expect(await gatehouse.services.opStore.grant(other.grantId)).toMatchObject({ revokedAt: null });

    const apps = (await get(bob, '/api/me/sessions')).body.sessions[0].apps.map((app: { grantId: string }) => app.grantId);
    expect(apps).not.toContain(grant.grantId);
    expect(apps).toContain(other.grantId);

    const [event] = (await gatehouse.services.audit.query({ type: 'oidc_grant_revoked', userId: bob.userId }, 1, 1)).events;
    expect(event).toMatchObject({ actorUserId: bob.userId, targetUserId: bob.userId, appId: 'grafana', details: { by: 'user', reason: 'revoked-by-user', app: { id: 'grafana', name: 'Grafana' }, grantId: grant.grantId, sessionId: bob.sessionId } });
    const activity = (await get(bob, '/api/me/activity')).body.events;
    expect(activity[0]).toMatchObject({ type: 'oidc_grant_revoked', summary: 'You signed out of Grafana', app: { name: 'Grafana' } });

    // Ended already: nothing live to end.
    expect((await send(bob, 'DELETE', `/api/me/grants/${grant.grantId}`)).status).toBe(404);
  });

  // Threat: IDOR. Someone who learns another person's grant id (a log, a shared screen, a guess) must
  // neither end it nor learn that it exists: the answer is the one for an id that does not exist.
  it('answers a grant of someone else exactly as one that does not exist, and leaves it alone', async () => {
    const alices = await grantFor(alice, 'grafana');
    const theirs = await send(bob, 'DELETE', `/api/me/grants/${alices.grantId}`);
    const nobodys = await send(bob, 'DELETE', '/api/me/grants/no-such-grant');
    expect(theirs.status).toBe(404);
    expect(nobodys.status).toBe(404);
    const [a, b] = [JSON.parse(theirs.body), JSON.parse(nobodys.body)];
    expect({ ...a, reference: '' }).toEqual({ ...b, reference: '' });
    expect(await gatehouse.services.opStore.grant(alices.grantId)).toMatchObject({ revokedAt: null });
    expect((await gatehouse.services.audit.query({ type: 'oidc_grant_revoked', userId: alice.userId }, 1, 1)).total).toBe(0);
  });

  // Threat: CSRF. Another page (or another app on the same site) making the person's browser end their
  // apps' sign-ins: no change without the session's CSRF token and the portal's Origin.
  it('ends nothing without the CSRF token and the portal’s Origin', async () => {
    const grant = await grantFor(bob, 'grafana');
    const attempts: Record<string, string>[] = [{ origin: portal }, { origin: 'http://evil.localhost', 'x-csrf-token': bob.csrf }, { origin: portal, 'x-csrf-token': alice.csrf }];
    for (const headers of attempts) {
      const answer = await send(bob, 'DELETE', `/api/me/grants/${grant.grantId}`, headers);
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'csrf_failed' });
    }
    expect(await gatehouse.services.opStore.grant(grant.grantId)).toMatchObject({ revokedAt: null });
  });

  it('answers a stranger 401 and a malformed id 400', async () => {
    const stranger = new ScriptedBrowser();
    expect((await stranger.request(`${portal}/api/me/grants/x`, { method: 'DELETE', headers: { origin: portal } })).status).toBe(401);
    expect((await send(bob, 'DELETE', `/api/me/grants/${'x'.repeat(65)}`)).status).toBe(400);
  });

  // Threat: privilege escalation. The console's views and endings of grants are for admins only, and
  // each change needs CSRF proof as every admin change does.
  it.each([
    ['GET', '/api/admin/apps/grafana/grants'],
    ['POST', '/api/admin/apps/grafana/grants/revoke-all'],
    ['DELETE', '/api/admin/grants/x'],
    ['GET', '/api/admin/users/x/grants'],
  ])('%s %s: 401 for nobody, 403 for a person who is not an admin', async (method, path) => {
    const stranger = new ScriptedBrowser();
    expect((await stranger.request(`${portal}${path}`, { method, headers: { origin: portal } })).status).toBe(401);
    const answer = await send(bob, method, path);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'forbidden' });
  });

  it('lists an app’s live grants to an admin, paged, with the person, the session’s browser and the scopes', async () => {
    await send(alice, 'POST', '/api/admin/apps/gitea/grants/revoke-all');
    const first = await grantFor(bob, 'gitea');
    const second = await grantFor(alice, 'gitea', ['openid', 'email']);
    await gatehouse.services.opStore.touchGrant(second.grantId, Date.now() + 1000);
    const page1 = await get(alice, '/api/admin/apps/gitea/grants?pageSize=1');
    expect(page1.status).toBe(200);
    // Most recently used first.
    expect(page1.body).toMatchObject({ total: 2, page: 1, pageSize: 1 });
    expect(page1.body.grants).toEqual([
      {
        grantId: second.grantId,
        app: { id: 'gitea', name: 'Gitea' },
        user: { id: alice.userId, email: 'alice@example.com', name: expect.any(String) },
        session: { id: alice.sessionId, device: expect.objectContaining({ type: expect.any(String) }), ip: expect.any(String) },
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        expiresAt: expect.any(String),
        scopes: ['openid', 'email'],
      },
    ]);
    const page2 = await get(alice, '/api/admin/apps/gitea/grants?pageSize=1&page=2');
    expect(page2.body.grants.map((grant: { grantId: string }) => grant.grantId)).toEqual([first.grantId]);
    expect((await get(alice, '/api/admin/apps/no-such-app/grants')).status).toBe(404);
  });

  it('lets an admin end one person’s sign-in to an app, recorded about that person', async () => {
    const grant = await grantFor(bob, 'grafana');
    expect((await send(alice, 'DELETE', `/api/admin/grants/${grant.grantId}`, { origin: portal })).status).toBe(403);
    expect((await send(alice, 'DELETE', `/api/admin/grants/${grant.grantId}`)).status).toBe(204);
    expect(await gatehouse.services.opStore.grant(grant.grantId)).toMatchObject({ revokedReason: 'revoked-by-admin' });
    const [event] = (await gatehouse.services.audit.query({ type: 'oidc_grant_revoked', userId: bob.userId }, 1, 1)).events;
    expect(event).toMatchObject({ actorUserId: alice.userId, targetUserId: bob.userId, appId: 'grafana', details: { by: 'admin', reason: 'revoked-by-admin', grantId: grant.grantId } });
    // The person sees that an administrator did it, and not from where.
    const [seen] = (await get(bob, '/api/me/activity')).body.events;
    expect(seen).toMatchObject({ summary: 'An administrator signed you out of Grafana', ip: null });
    expect((await send(alice, 'DELETE', `/api/admin/grants/${grant.grantId}`)).status).toBe(404);
  });

  it('signs everyone out of an app at an admin’s word, and leaves the other apps alone', async () => {
    const bobs = await grantFor(bob, 'grafana');
    const alices = await grantFor(alice, 'grafana');
    const elsewhere = await grantFor(bob, 'gitea');
    const live = (await get(alice, '/api/admin/apps/grafana/grants')).body.total as number;
    expect(live).toBeGreaterThanOrEqual(2);
    const answer = await send(alice, 'POST', '/api/admin/apps/grafana/grants/revoke-all');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ revoked: live });
    for (const grant of [bobs, alices]) expect(await gatehouse.services.opStore.grant(grant.grantId)).toMatchObject({ revokedReason: 'revoked-by-admin' });
    expect(await gatehouse.services.opStore.grant(elsewhere.grantId)).toMatchObject({ revokedAt: null });
    expect((await get(alice, '/api/admin/apps/grafana/grants')).body).toMatchObject({ grants: [], total: 0 });
    // One audit event per person's grant.
    expect((await gatehouse.services.audit.query({ type: 'oidc_grant_revoked', userId: alice.userId }, 1, 50)).events.filter((event) => event.details.grantId === alices.grantId)).toHaveLength(1);
  });

  it('lists on a user’s page in the console the apps they are signed in to', async () => {
    const grant = await grantFor(bob, 'grafana');
    const { status, body } = await get(alice, `/api/admin/users/${bob.userId}/grants`);
    expect(status).toBe(200);
    expect(body.grants.map((found: { grantId: string }) => found.grantId)).toContain(grant.grantId);
    expect(body.grants.every((found: { user: { id: string } }) => found.user.id === bob.userId)).toBe(true);
    expect((await get(alice, '/api/admin/users/no-such-user/grants')).status).toBe(404);
  });
});
