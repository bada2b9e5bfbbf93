import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startUpstream, type Upstream } from './support/upstream.js';

/**
 * Identity providers managed in the admin console, against real development IdP processes: the config
 * provider "dev" (alice, an admin; bob) and a second IdP ("partner": alice@partner.example, carol) that
 * an admin adds from the console by its issuer URL.
 */
let dev: DevIdpProcess;
let partner: DevIdpProcess;
let notAnIssuer: Upstream;
let gatehouse: RunningGatehouse;
let portal: string;
const DEV_SECRET = 'gatehouse-dev-secret';

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  const common = { postLogoutRedirectUris: [`${portal}/signed-out`] };
  [dev, partner, notAnIssuer] = await Promise.all([
    startDevIdpProcess({ ...common, redirectUris: [`${portal}/.gatehouse/callback/dev`], cookiePrefix: 'devidp' }),
    // The admin registered Gatehouse at the partner IdP with the redirect URI the console showed.
    startDevIdpProcess({ ...common, name: 'Partner IdP', redirectUris: [`${portal}/.gatehouse/callback/partner`], userSet: 'partner', cookiePrefix: 'partneridp' }),
    startUpstream(),
  ]);
  gatehouse = await startGatehouse({
    port,
    admins: { groups: [{ provider: 'dev', group: 'admins' }] },
    providers: [{ id: 'dev', name: 'Development IdP', issuer: dev.issuer, clientId: 'gatehouse', clientSecret: DEV_SECRET, createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'], pushedAuthorizationRequests: 'never' }],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await Promise.all([dev?.close(), partner?.close(), notAnIssuer?.close()]);
});

const partnerDefinition = () => ({
  id: 'partner',
  name: 'Partner IdP',
  issuer: partner.issuer,
  clientId: 'gatehouse',
  clientSecret: DEV_SECRET,
  scopes: ['openid', 'email', 'profile', 'groups'],
  createUsers: true,
});

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

/** Follows a started authorization through the IdP (filling its login form if shown); the callback's answer. */
async function throughIdp(browser: ScriptedBrowser, start: Hop, login: string, password: string): Promise<Hop> {
  const first = await browser.follow(start, isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  return browser.request(callback!.href);
}

async function signIn(providerId: string, login: string, password: string, browser = new ScriptedBrowser()) {
  const done = await throughIdp(browser, await browser.request(`${portal}/.gatehouse/sign-in/${providerId}`), login, password);
  const session = await browser.request(`${portal}/api/session`);
  const csrf = session.status === 200 ? (JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string) : '';
  return { browser, csrf, done, me: session.status === 200 ? JSON.parse(session.body) : undefined };
}

const send = (who: { browser: ScriptedBrowser; csrf?: string }, method: string, path: string, body?: unknown) =>
  who.browser.request(`${portal}${path}`, {
    method,
    headers: { origin: portal, ...(who.csrf ? { 'x-csrf-token': who.csrf } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const json = (hop: Hop) => JSON.parse(hop.body);
const offered = async () => (json(await new ScriptedBrowser().request(`${portal}/api/providers`)).providers as Array<{ id: string }>).map((p) => p.id);

/** Starts a test sign-in from the console and completes it at the IdP; the callback's answer. */
async function testSignIn(admin: { browser: ScriptedBrowser; csrf: string }, providerId: string, login: string, password: string): Promise<Hop> {
  const start = await admin.browser.request(`${portal}/.gatehouse/test-sign-in/${providerId}`, { form: { csrf_token: admin.csrf }, headers: { origin: portal } });
  expect(start.status).toBe(303);
  return throughIdp(admin.browser, start, login, password);
}

async function testResult(admin: { browser: ScriptedBrowser }, done: Hop) {
  expect(done.status).toBe(303);
  const page = new URL(done.headers.get('location')!, portal);
  const match = /^\/admin\/providers\/([^/]+)\/tests\/([^/]+)$/.exec(page.pathname);
  expect(match).not.toBeNull();
  return json(await admin.browser.request(`${portal}/api/admin/providers/${match![1]}/tests/${match![2]}`));
}

const counts = async () => {
  const db = gatehouse.services.database.db;
  const count = async (table: 'users' | 'identities' | 'sessions') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { users: await count('users'), identities: await count('identities'), sessions: await count('sessions') };
};

describe('organisation-wide sign-in settings', () => {
  it('createUsers off refuses people unknown to Gatehouse; known people still sign in', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    expect(json(await alice.browser.request(`${portal}/api/admin/sign-in-settings`))).toEqual({ allowedDomains: [], createUsers: true });
    const set = await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: [], createUsers: false });
    expect(json(set)).toEqual({ allowedDomains: [], createUsers: false });
    const bob = await signIn('dev', 'bob@example.com', 'bob');
    expect(bob.done.status).toBe(403);
    expect(bob.done.body).toContain('sign_in_not_allowed');
    expect(bob.me).toBeUndefined();
    expect((await signIn('dev', 'alice@example.com', 'alice')).me.user.email).toBe('alice@example.com');
    const events = json(await alice.browser.request(`${portal}/api/admin/audit?type=sign_in_settings_updated`)).events;
    expect(events[0].details).toEqual({ before: { allowedDomains: [], createUsers: true }, after: { allowedDomains: [], createUsers: false }, sessionsEnded: 0 });
    await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: [], createUsers: true });
  });

  it('allowed domains narrow sign-in for every provider; an admin cannot lock themselves out', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    // Threat: a typo in the domain list ending the admin's own access.
    const lockout = await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: ['corp.example'], createUsers: true });
    expect(lockout.status).toBe(409);
    expect(json(lockout).code).toBe('self_lockout');
    const bad = await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: ['not a domain'], createUsers: true });
    expect(json(bad)).toMatchObject({ code: 'bad_request', detail: expect.stringContaining('allowedDomains[0]: must be a domain') });
    expect((await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: ['EXAMPLE.com', 'corp.example'], createUsers: true })).status).toBe(200);
    expect(json(await alice.browser.request(`${portal}/api/admin/sign-in-settings`)).allowedDomains).toEqual(['example.com', 'corp.example']);
    expect((await signIn('dev', 'bob@example.com', 'bob')).me.user.email).toBe('bob@example.com');
    await send(alice, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: [], createUsers: true });
  });
});

describe('identity providers in the console', () => {
  it('previews an issuer’s discovery document, or says clearly why it cannot', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const discover = async (issuer: string) => send(alice, 'POST', '/api/admin/providers/discover', { issuer });
    const good = await discover(partner.issuer);
    expect(good.status).toBe(200);
    expect(json(good)).toMatchObject({
      issuer: partner.issuer,
      authorizationEndpoint: expect.stringMatching(/^http:\/\/localhost:\d+\//),
      tokenEndpoint: expect.any(String),
      jwksUri: expect.any(String),
      pkce: 'S256',
      codeChallengeMethodsSupported: ['S256'],
      pushedAuthorizationRequests: 'supported',
      backchannelLogout: true,
      scopesSupported: expect.arrayContaining(['openid', 'email']),
    });
    const unreachable = await discover(`http://127.0.0.1:${await freePort()}`);
    expect(unreachable.status).toBe(502);
    expect(json(unreachable)).toMatchObject({ code: 'issuer_unreachable', detail: expect.stringContaining("We couldn't reach http://127.0.0.1:") });
    const notOidc = await discover(notAnIssuer.url);
    expect(notOidc.status).toBe(400);
    expect(json(notOidc).code).toBe('issuer_invalid');
    // The document names http://localhost:<port>; another spelling of the same server is not that issuer.
    const mismatch = await discover(partner.issuer.replace('localhost', '127.0.0.1'));
    expect(json(mismatch)).toMatchObject({ code: 'issuer_invalid', detail: expect.stringContaining(`names ${partner.issuer}`) });
    const plainHttp = await discover('http://idp.example.com');
    expect(json(plainHttp)).toMatchObject({ code: 'bad_request', detail: expect.stringContaining('issuer: must be https') });
  });

  it('adds a provider: listed with its redirect URI, hidden until a test sign-in passed, never showing its secret; then people sign in with it', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const unreachable = await send(alice, 'POST', '/api/admin/providers', { ...partnerDefinition(), issuer: `http://127.0.0.1:${await freePort()}` });
    expect(json(unreachable).code).toBe('issuer_unreachable');
    const clash = await send(alice, 'POST', '/api/admin/providers', { ...partnerDefinition(), id: 'dev' });
    expect(clash.status).toBe(409);
    expect(clash.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(json(clash)).toMatchObject({ code: 'conflict', field: 'id', detail: 'A provider in the configuration file already has the id "dev". Choose another.' });
    const created = await send(alice, 'POST', '/api/admin/providers', partnerDefinition());
    expect(created.status).toBe(201);
    expect(created.body).not.toContain(DEV_SECRET);

    // Discovery runs in the background from the moment it is saved.
    let list = await alice.browser.request(`${portal}/api/admin/providers`);
    for (let i = 0; i < 50 && !list.body.includes('"status":"ready","error":null', list.body.indexOf('"id":"partner"')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      list = await alice.browser.request(`${portal}/api/admin/providers`);
    }
    expect(list.body).not.toContain(DEV_SECRET);
    const providers = json(list).providers;
    expect(providers.map((p: { id: string; source: string }) => [p.id, p.source])).toEqual([
      ['dev', 'config'],
      ['partner', 'console'],
    ]);
    expect(providers[1]).toMatchObject({
      issuer: partner.issuer,
      redirectUri: `${portal}/.gatehouse/callback/partner`,
      hasClientSecret: true,
      enabled: true,
      linkedIdentities: 0,
      discovery: { status: 'ready' },
      publication: { state: 'hidden', how: null, at: null },
    });
    // Threat: a provider that never worked shown to everyone (people sent to an IdP that fails). Until
    // a test sign-in passed it is offered nowhere, and a sign-in started by its URL is a 404.
    expect(await offered()).toEqual(['dev']);
    expect((await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/partner`, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect(json(await alice.browser.request(`${portal}/readyz`)).checks.providers.map((p: { id: string }) => p.id)).toEqual(['dev']);
    expect(json(await alice.browser.request(`${portal}/api/me/identities`)).linkable).toEqual([]);

    // The admin's test sign-in passes: the provider is published.
    const tested = await testResult(alice, await testSignIn(alice, 'partner', 'carol@partner.example', 'carol'));
    expect(tested.result).toBe('create');
    const shown = json(await alice.browser.request(`${portal}/api/admin/providers`)).providers[1];
    expect(shown.publication).toMatchObject({ state: 'published', how: 'test', at: expect.any(String) });
    expect(await offered()).toEqual(['dev', 'partner']);
    const published = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_published`)).events;
    expect(published[0]).toMatchObject({ providerId: 'partner', actor: { email: 'alice@example.com' }, details: { how: 'test' } });

    const carol = await signIn('partner', 'carol@partner.example', 'carol');
    expect(carol.me.user.email).toBe('carol@partner.example');
    expect(carol.me.session.provider).toEqual({ id: 'partner', name: 'Partner IdP' });
    const events = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_created`)).events;
    expect(events[0]).toMatchObject({ providerId: 'partner', details: { before: null, after: { id: 'partner', clientSecret: '(set)' } } });
    expect(JSON.stringify(events)).not.toContain(DEV_SECRET);
  });

  it('a replace without the secret keeps it (sign-in still works); an empty secret is refused', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const { clientSecret: _secret, ...withoutSecret } = partnerDefinition();
    const empty = await send(alice, 'PUT', '/api/admin/providers/partner', { ...withoutSecret, clientSecret: '' });
    expect(json(empty)).toMatchObject({ code: 'bad_request', detail: expect.stringContaining('clientSecret: must not be empty') });
    const renamed = await send(alice, 'PUT', '/api/admin/providers/partner', { ...withoutSecret, name: 'Partner' });
    expect(renamed.status).toBe(200);
    expect(json(renamed)).toMatchObject({ name: 'Partner', hasClientSecret: true, linkedIdentities: 1 });
    expect((await signIn('partner', 'carol@partner.example', 'carol')).me.user.email).toBe('carol@partner.example');
    const readOnly = await send(alice, 'PUT', '/api/admin/providers/dev', withoutSecret);
    expect(json(readOnly).code).toBe('provider_from_config');
    // Threat: subjects of another issuer signing into the accounts linked through this provider.
    const moved = await send(alice, 'PUT', '/api/admin/providers/partner', { ...withoutSecret, name: 'Partner', issuer: dev.issuer });
    expect(json(moved).code).toBe('provider_in_use');
  });

  it('a delete is refused while identities are linked to the provider', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const refused = await send(alice, 'DELETE', '/api/admin/providers/partner');
    expect(refused.status).toBe(409);
    expect(json(refused)).toMatchObject({ code: 'provider_in_use', detail: expect.stringContaining('Turn it off instead') });
    expect(json(await send(alice, 'DELETE', '/api/admin/providers/dev')).code).toBe('provider_from_config');
  });

  it('a test sign-in verifies the IdP’s answer and reports the decision, creating no user, identity or session', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const second = await signIn('dev', 'alice@example.com', 'alice');
    const sessionBefore = json(await alice.browser.request(`${portal}/api/session`)).session.id;
    const before = await counts();
    const created = await testResult(alice, await testSignIn(alice, 'partner', 'alice@partner.example', 'alice'));
    expect(created).toMatchObject({
      provider: { id: 'partner', name: 'Partner' },
      actor: { email: 'alice@example.com' },
      result: 'create',
      profile: { email: 'alice@partner.example', emailVerified: true, name: 'Alice Partner', groups: ['partners'], groupCount: 1 },
    });
    expect(await counts()).toEqual(before);
    expect(json(await alice.browser.request(`${portal}/api/session`)).session.id).toBe(sessionBefore);

    // Another admin browser, as carol, who already has an account; then with the organisation narrowed.
    const existing = await testResult(second, await testSignIn(second, 'partner', 'carol@partner.example', 'carol'));
    expect(existing).toMatchObject({ result: 'existing', user: { email: 'carol@partner.example' } });
    await send(second, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: ['example.com'], createUsers: true });
    const refused = await testResult(second, await testSignIn(second, 'partner', 'carol@partner.example', 'carol'));
    expect(refused).toMatchObject({
      result: 'refused',
      code: 'sign_in_not_allowed',
      reason: 'domain_not_allowed_by_organization',
      why: "partner.example is not among the organisation's allowed domains",
      message: 'partner.example is not allowed here. Contact your administrator if you think it should.',
    });
    await send(second, 'PUT', '/api/admin/sign-in-settings', { allowedDomains: [], createUsers: true });
    expect(await counts()).toEqual(before);
    const tested = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_tested`)).events;
    // The oldest: the test that published the provider.
    expect(tested.map((e: { details: { result: string } }) => e.details.result)).toEqual(['refused', 'existing', 'create', 'create']);
  });

  it('a test sign-in is bound to the admin session that started it, and only admins start one', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const start = await alice.browser.request(`${portal}/.gatehouse/test-sign-in/partner`, { form: { csrf_token: alice.csrf }, headers: { origin: portal } });
    // The admin signs in again in that browser (a new session) before the IdP answers.
    await signIn('dev', 'alice@example.com', 'alice', alice.browser);
    const done = await throughIdp(alice.browser, start, 'alice@partner.example', 'alice');
    expect(done.status).toBe(400);
    expect(done.body).toContain('sign_in_expired');

    const bob = await signIn('dev', 'bob@example.com', 'bob');
    const refused = await bob.browser.request(`${portal}/.gatehouse/test-sign-in/partner`, { form: { csrf_token: bob.csrf }, headers: { origin: portal } });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('forbidden');
    const noToken = await alice.browser.request(`${portal}/.gatehouse/test-sign-in/partner`, { form: { csrf_token: 'x' }, headers: { origin: portal } });
    expect(noToken.body).toContain('csrf_failed');
    const signedOut = await new ScriptedBrowser().request(`${portal}/.gatehouse/test-sign-in/partner`, { form: { csrf_token: 'x' }, headers: { origin: portal } });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`/sign-in?rd=${encodeURIComponent('/admin/providers/partner')}`);
  });

  it('turned off: not offered, sign-in answers provider_disabled, its sessions end; back on without a restart', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const carol = await signIn('partner', 'carol@partner.example', 'carol');
    const pendingStart = await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/partner`);
    expect(pendingStart.status).toBe(303);

    const disabled = await send(alice, 'POST', '/api/admin/providers/partner/disable');
    expect(json(disabled)).toMatchObject({ id: 'partner', enabled: false });
    expect(await offered()).toEqual(['dev']);
    expect((await carol.browser.request(`${portal}/api/session`)).status).toBe(401);
    const start = await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/partner`, { headers: { accept: 'text/html' } });
    expect(start.status).toBe(403);
    expect(start.body).toContain('provider_disabled');
    expect(start.body).toContain('Signing in with Partner is turned off');
    expect(json(await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/partner`, { headers: { accept: 'application/json' } })).code).toBe('provider_disabled');
    const events = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_disabled`)).events;
    expect(events[0].details).toMatchObject({ before: { enabled: true }, after: { enabled: false }, sessionsEnded: expect.any(Number) });
    expect(events[0].details.sessionsEnded).toBeGreaterThanOrEqual(1);

    // Threat: a provider that is off lets nothing through, not even a logout token (its sessions ended already).
    const logout = await new ScriptedBrowser().request(`${portal}/.gatehouse/backchannel-logout/partner`, { form: { logout_token: 'x.y.z' } });
    expect(logout.status).toBe(400);
    expect(json(logout).error_description).toBe('unknown provider');

    // An admin can still try it while it is off.
    const tested = await testResult(alice, await testSignIn(alice, 'partner', 'carol@partner.example', 'carol'));
    expect(tested.result).toBe('existing');

    expect(json(await send(alice, 'POST', '/api/admin/providers/partner/enable')).enabled).toBe(true);
    expect(await offered()).toEqual(['dev', 'partner']);
    expect((await signIn('partner', 'carol@partner.example', 'carol')).me.user.email).toBe('carol@partner.example');
    const types = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_enabled`)).events.map((e: { type: string }) => e.type);
    expect(types).toEqual(['provider_enabled']);
  });

  it('an admin cannot turn off the provider they are signed in with', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const carol = await signIn('partner', 'carol@partner.example', 'carol');
    expect((await send(alice, 'PUT', `/api/admin/users/${carol.me.user.id}/admin`, { admin: true })).status).toBe(204);
    const refused = await send(carol, 'POST', '/api/admin/providers/partner/disable');
    expect(refused.status).toBe(409);
    expect(json(refused)).toMatchObject({ code: 'self_lockout', detail: expect.stringContaining('you are signed in with Partner') });
    expect(json(await send(carol, 'POST', '/api/admin/providers/dev/disable')).code).toBe('provider_from_config');
    expect((await send(alice, 'PUT', `/api/admin/users/${carol.me.user.id}/admin`, { admin: false })).status).toBe(204);
  });

  it('the new routes are in the OpenAPI document, under the admin tag', async () => {
    const document = json(await new ScriptedBrowser().request(`${portal}/api/docs`));
    for (const path of ['/api/admin/providers', '/api/admin/providers/discover', '/api/admin/providers/{providerId}', '/api/admin/providers/{providerId}/disable', '/api/admin/providers/{providerId}/publish', '/api/admin/providers/{providerId}/tests/{testId}', '/api/admin/sign-in-settings']) {
      const operations = Object.values(document.paths[path] ?? {}) as Array<{ tags?: string[]; summary?: string }>;
      expect(operations.length, path).toBeGreaterThan(0);
      expect(operations.every((operation) => operation.tags?.includes('admin') && operation.summary), path).toBe(true);
    }
  });

  it('a provider nobody signed in with is deleted, and a test of an unreachable one reports provider_unavailable', async () => {
    const alice = await signIn('dev', 'alice@example.com', 'alice');
    const spare = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/spare`], postLogoutRedirectUris: [], cookiePrefix: 'spareidp' });
    try {
      const created = await send(alice, 'POST', '/api/admin/providers', { ...partnerDefinition(), id: 'spare', name: 'Spare', issuer: spare.issuer, enabled: false });
      expect(json(created)).toMatchObject({ id: 'spare', enabled: false, discovery: { status: 'pending' }, publication: { state: 'hidden' } });
      expect(await offered()).toEqual(['dev', 'partner']);
      // Published untested only with the admin's explicit confirmation; never a provider of gatehouse.yaml.
      expect(json(await send(alice, 'POST', '/api/admin/providers/spare/publish', {})).code).toBe('bad_request');
      expect(json(await send(alice, 'POST', '/api/admin/providers/dev/publish', { untested: true })).code).toBe('provider_from_config');
      const knowingly = await send(alice, 'POST', '/api/admin/providers/spare/publish', { untested: true });
      expect(json(knowingly).publication).toMatchObject({ state: 'published', how: 'admin' });
      const event = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_published`)).events[0];
      expect(event).toMatchObject({ providerId: 'spare', details: { how: 'admin', untested: true } });
    } finally {
      await spare.close();
    }
    const start = await alice.browser.request(`${portal}/.gatehouse/test-sign-in/spare`, { form: { csrf_token: alice.csrf }, headers: { origin: portal } });
    const result = await testResult(alice, start);
    expect(result).toMatchObject({ result: 'failed', code: 'provider_unavailable', message: "We couldn't reach Spare. Try again in a minute." });
    expect((await send(alice, 'DELETE', '/api/admin/providers/spare')).status).toBe(204);
    expect(json(await alice.browser.request(`${portal}/api/admin/providers`)).providers.map((p: { id: string }) => p.id)).toEqual(['dev', 'partner']);
    expect((await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/spare`, { headers: { accept: 'application/json' } })).status).toBe(404);
    const deleted = json(await alice.browser.request(`${portal}/api/admin/audit?type=provider_deleted`)).events[0];
    expect(deleted.details).toMatchObject({ provider: { id: 'spare', name: 'Spare' }, before: { id: 'spare', clientSecret: '(set)' }, after: null });
  });
});
