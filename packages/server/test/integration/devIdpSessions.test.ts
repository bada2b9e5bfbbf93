import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, inputValue, ScriptedBrowser, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/** Sessions against the real development IdPs: back-channel logout, claims refresh, linking, mix-up. */
let dev: DevIdpProcess;
let partner: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;
const CONTROL = 'control-token-for-tests';

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  const common = { postLogoutRedirectUris: [`${portal}/signed-out`] };
  [dev, partner] = await Promise.all([
    startDevIdpProcess({
      ...common,
      redirectUris: [`${portal}/.gatehouse/callback/dev`],
      backchannelLogoutUri: `${portal}/.gatehouse/backchannel-logout/dev`,
      controlToken: CONTROL,
      cookiePrefix: 'devidp',
    }),
    startDevIdpProcess({
      ...common,
      name: 'Partner IdP',
      redirectUris: [`${portal}/.gatehouse/callback/partner`],
      backchannelLogoutUri: `${portal}/.gatehouse/backchannel-logout/partner`,
      userSet: 'partner',
      cookiePrefix: 'partneridp',
    }),
  ]);
  const provider = { clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'], pushedAuthorizationRequests: 'never' as const };
  gatehouse = await startGatehouse({
    port,
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: dev.issuer, ...provider, trustGroups: true },
      { id: 'partner', name: 'Partner IdP', issuer: partner.issuer, ...provider },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await Promise.all([dev?.close(), partner?.close()]);
});

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

/** Follows a started authorization to the IdP; fills its login form if it shows one. Stops before the callback. */
async function throughIdp(browser: ScriptedBrowser, start: Hop, login: string, password: string): Promise<URL> {
  const first = await browser.follow(start, isCallback);
  if (first.stoppedAt) return first.stoppedAt;
  const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
  const { stoppedAt } = await browser.follow(posted, isCallback);
  return stoppedAt!;
}

async function signIn(browser: ScriptedBrowser, provider: 'dev' | 'partner', login: string, password: string) {
  const start = await browser.request(`${portal}/.gatehouse/sign-in/${provider}`);
  const callback = await browser.request((await throughIdp(browser, start, login, password)).href);
  expect(callback.status).toBe(303);
  return JSON.parse((await browser.request(`${portal}/api/session`)).body) as { user: { id: string; email: string; groups: string[] }; session: { id: string } };
}

async function csrf(browser: ScriptedBrowser): Promise<string> {
  return (JSON.parse((await browser.request(`${portal}/api/csrf`)).body) as { csrfToken: string }).csrfToken;
}

it('signing out at the IdP ends the Gatehouse session through back-channel logout', async () => {
  const browser = new ScriptedBrowser();
  await signIn(browser, 'dev', 'bob@example.com', 'bob');
  expect((await browser.request(`${portal}/api/session`)).status).toBe(200);

  // The person signs out at the IdP itself (not through Gatehouse).
  const discovery = (await (await fetch(`${dev.issuer}/.well-known/openid-configuration`)).json()) as { end_session_endpoint: string };
  const confirm = await browser.request(`${discovery.end_session_endpoint}?client_id=gatehouse`);
  const { hop } = await browser.follow(confirm);
  const done = await browser.request(new URL(formAction(hop.body)!, hop.url).href, { form: { xsrf: inputValue(hop.body, 'xsrf') ?? '', logout: 'yes' } });
  expect(done.status).toBeLessThan(400);

  await expect.poll(async () => (await browser.request(`${portal}/api/session`)).status, { timeout: 5000 }).toBe(401);
  const activity = await gatehouse.services.database.db.selectFrom('audit_events').selectAll().where('type', '=', 'backchannel_logout').execute();
  expect(activity.length).toBeGreaterThan(0);
});

it('a group removed at the IdP stops counting at the next claims check', async () => {
  const browser = new ScriptedBrowser();
  const me = await signIn(browser, 'dev', 'alice@example.com', 'alice');
  expect(me.user.groups).toEqual(['staff', 'admins']);
  const changed = await fetch(`${dev.issuer}/__control/users/${encodeURIComponent('alice@example.com')}/groups`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
    body: JSON.stringify({ groups: ['staff'] }),
  });
  expect(changed.status).toBe(204);
  try {
    // Not yet due: the claims from sign-in still stand.
    expect(JSON.parse((await browser.request(`${portal}/api/session`)).body).user.groups).toEqual(['staff', 'admins']);
    await gatehouse.services.database.db.updateTable('sessions').set({ claims_checked_at: 0 }).where('id', '=', me.session.id).execute();
    gatehouse.services.resolver.invalidate(me.session.id);
    expect(JSON.parse((await browser.request(`${portal}/api/session`)).body).user.groups).toEqual(['staff']);
  } finally {
    await fetch(`${dev.issuer}/__control/users/${encodeURIComponent('alice@example.com')}/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
      body: JSON.stringify({ groups: ['staff', 'admins'] }),
    });
  }
});

describe('linking another provider', () => {
  it('links the Partner IdP to alice, then signing in with it reaches the same account; unlink', async () => {
    const browser = new ScriptedBrowser();
    const me = await signIn(browser, 'dev', 'alice@example.com', 'alice');
    const token = await csrf(browser);

    // Threat: CSRF on linking (an attacker linking their own IdP account to the victim's Gatehouse account).
    const forged = await browser.request(`${portal}/.gatehouse/link/partner`, { form: { csrf_token: token }, headers: { origin: 'http://localhost:1' } });
    expect(forged.status).toBe(403);

    const start = await browser.request(`${portal}/.gatehouse/link/partner`, { form: { csrf_token: token }, headers: { origin: portal } });
    expect(start.status).toBe(303);
    const back = await browser.request((await throughIdp(browser, start, 'alice@partner.example', 'alice')).href);
    expect(back.headers.get('location')).toBe('/account?linked=partner');

    const identities = JSON.parse((await browser.request(`${portal}/api/me/identities`)).body);
    expect(identities.identities.map((i: { provider: { id: string } }) => i.provider.id)).toEqual(['dev', 'partner']);
    expect(identities.linkable).toEqual([]);

    // Another browser signs in with the Partner IdP: same user, primary email unchanged.
    const other = new ScriptedBrowser();
    const viaPartner = await signIn(other, 'partner', 'alice@partner.example', 'alice');
    expect(viaPartner.user.id).toBe(me.user.id);
    expect(viaPartner.user.email).toBe('alice@example.com');

    // Unlink the partner identity from the first browser; the partner-signed session ends with it.
    const partnerIdentity = identities.identities.find((i: { provider: { id: string } }) => i.provider.id === 'partner');
    const unlinked = await browser.request(`${portal}/api/me/identities/${partnerIdentity.id}`, { method: 'DELETE', headers: { origin: portal, 'x-csrf-token': token } });
    expect(unlinked.status).toBe(204);
    expect((await other.request(`${portal}/api/session`)).status).toBe(401);

    // The last identity cannot be unlinked.
    const devIdentity = identities.identities.find((i: { provider: { id: string } }) => i.provider.id === 'dev');
    const last = await browser.request(`${portal}/api/me/identities/${devIdentity.id}`, { method: 'DELETE', headers: { origin: portal, 'x-csrf-token': token } });
    expect(last.status).toBe(409);
    expect(JSON.parse(last.body).code).toBe('last_identity');

    const activity = JSON.parse((await browser.request(`${portal}/api/me/activity`)).body).events.map((e: { type: string }) => e.type);
    expect(activity).toEqual(expect.arrayContaining(['sign_in', 'identity_linked', 'identity_unlinked']));
    // Paged: a page of 2, then the next, newest first, and the total to page through.
    const first = JSON.parse((await browser.request(`${portal}/api/me/activity?pageSize=2`)).body);
    const second = JSON.parse((await browser.request(`${portal}/api/me/activity?pageSize=2&page=2`)).body);
    expect(first).toMatchObject({ page: 1, pageSize: 2 });
    expect(first.events).toHaveLength(2);
    expect(first.total).toBeGreaterThanOrEqual(3);
    expect(second.events[0].id).not.toBe(first.events[0].id);
    expect(Date.parse(second.events[0].time)).toBeLessThanOrEqual(Date.parse(first.events[1].time));
    // Threat: a page size past the limit is refused, not served (no unbounded read of the audit table).
    expect((await browser.request(`${portal}/api/me/activity?pageSize=5000`)).status).toBe(400);
  });

  // Threat: account takeover by linking. An identity that belongs to another user is never moved.
  it('an identity belonging to another user cannot be linked', async () => {
    const carol = new ScriptedBrowser();
    await signIn(carol, 'partner', 'carol@partner.example', 'carol');
    const bob = new ScriptedBrowser();
    await signIn(bob, 'dev', 'bob@example.com', 'bob');
    const token = await csrf(bob);
    const start = await bob.request(`${portal}/.gatehouse/link/partner`, { form: { csrf_token: token }, headers: { origin: portal } });
    const back = await bob.request((await throughIdp(bob, start, 'carol@partner.example', 'carol')).href);
    expect(back.status).toBe(409);
    expect(back.body).toContain('identity_conflict');
  });
});

describe('mix-up defence (RFC 9700 §4.4, RFC 9207)', () => {
  it('a response from the Partner IdP cannot complete an attempt started with the Development IdP', async () => {
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev`);
    const devCallback = await throughIdp(browser, start, 'alice@example.com', 'alice');
    // The same state and code delivered at the Partner IdP's redirect URI.
    const crossed = await browser.request(devCallback.href.replace('/callback/dev?', '/callback/partner?'));
    expect(crossed.status).toBe(400);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });

  it('a callback naming the other issuer in `iss` is refused', async () => {
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev`);
    const callback = await throughIdp(browser, start, 'alice@example.com', 'alice');
    callback.searchParams.set('iss', partner.issuer);
    const refused = await browser.request(callback.href);
    expect(refused.status).toBe(502);
    expect(refused.body).toContain('invalid_response');
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });
});

describe('sessions in the account center', () => {
  it('lists every active session with its device, marks the current one, revokes one and the others', async () => {
    const browsers = [new ScriptedBrowser(), new ScriptedBrowser(), new ScriptedBrowser()];
    for (const browser of browsers) await signIn(browser, 'partner', 'carol@partner.example', 'carol');
    const [first, second, third] = browsers as [ScriptedBrowser, ScriptedBrowser, ScriptedBrowser];
    const list = JSON.parse((await first.request(`${portal}/api/me/sessions`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36' } })).body);
    expect(list.sessions.length).toBeGreaterThanOrEqual(3);
    expect(list.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(first.cookie('localhost', 'gatehouse_session'));

    const token = await csrf(first);
    const secondId = JSON.parse((await second.request(`${portal}/api/session`)).body).session.id;
    // Without the CSRF token, nothing happens.
    expect((await first.request(`${portal}/api/me/sessions/${secondId}`, { method: 'DELETE', headers: { origin: portal } })).status).toBe(403);
    expect((await second.request(`${portal}/api/session`)).status).toBe(200);
    // Revoked: dead at its very next request.
    expect((await first.request(`${portal}/api/me/sessions/${secondId}`, { method: 'DELETE', headers: { origin: portal, 'x-csrf-token': token } })).status).toBe(204);
    expect((await second.request(`${portal}/api/session`)).status).toBe(401);
    // A session of somebody else cannot be revoked through this API.
    const bob = new ScriptedBrowser();
    const bobSession = (await signIn(bob, 'dev', 'bob@example.com', 'bob')).session.id;
    expect((await first.request(`${portal}/api/me/sessions/${bobSession}`, { method: 'DELETE', headers: { origin: portal, 'x-csrf-token': token } })).status).toBe(404);
    expect((await bob.request(`${portal}/api/session`)).status).toBe(200);

    const others = await first.request(`${portal}/api/me/sessions/revoke-others`, { method: 'POST', headers: { origin: portal, 'x-csrf-token': token } });
    expect(others.status).toBe(200);
    expect(JSON.parse(others.body).revoked).toBeGreaterThanOrEqual(1);
    expect((await third.request(`${portal}/api/session`)).status).toBe(401);
    expect((await first.request(`${portal}/api/session`)).status).toBe(200);
  });

  it('the OpenAPI document describes the account API', async () => {
    const document = (await (await fetch(`${portal}/api/docs`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/session', '/api/me/sessions', '/api/me/sessions/{sessionId}', '/api/me/identities', '/api/me/activity']),
    );
  });
});
