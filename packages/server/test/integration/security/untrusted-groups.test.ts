import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser, type Hop } from '../support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from '../support/devIdpProcess.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * Threat: groups from an untrusted provider, through the real server and real IdP processes. The
 * contractor's IdP admits only @partner.example people, yet used to make anyone it asserted `admins`
 * for a Gatehouse admin and let them into every app guarded by the organisation's `admins` group.
 * Here carol signs in with it (added in the console, so untrusted by default) while it asserts
 * `groups: [admins]`: she is no admin, her launcher is empty and the admins-only app refuses her,
 * while alice (the organisation's own IdP, trusted) gets in. Trust given and taken back in the console
 * counts at the next request, without a restart.
 */
const CONTROL = 'control-token-for-tests';
const SECRET = 'gatehouse-dev-secret';
let corp: DevIdpProcess;
let contractor: DevIdpProcess;
let upstream: Upstream;
let gatehouse: RunningGatehouse;
let portal: string;
let vault: string;

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  vault = `http://vault.localhost:${port}`;
  const common = { postLogoutRedirectUris: [`${portal}/signed-out`] };
  [corp, contractor, upstream] = await Promise.all([
    startDevIdpProcess({ ...common, name: 'Corp IdP', redirectUris: [`${portal}/.gatehouse/callback/corp`], cookiePrefix: 'corpidp' }),
    startDevIdpProcess({ ...common, name: 'Contractor IdP', redirectUris: [`${portal}/.gatehouse/callback/contractor`], userSet: 'partner', cookiePrefix: 'contractoridp', controlToken: CONTROL }),
    startUpstream(),
  ]);
  // The contractor's IdP claims carol is in `admins`, the organisation's admin group name.
  const planted = await fetch(`${contractor.issuer}/__control/users/${encodeURIComponent('carol@partner.example')}/groups`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
    body: JSON.stringify({ groups: ['admins'] }),
  });
  expect(planted.status).toBe(204);
  gatehouse = await startGatehouse({
    port,
    admins: { groups: [{ provider: 'corp', group: 'admins' }] },
    providers: [
      { id: 'corp', name: 'Corp IdP', issuer: corp.issuer, clientId: 'gatehouse', clientSecret: SECRET, createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'], pushedAuthorizationRequests: 'never' },
    ],
    apps: [{ id: 'vault', name: 'Vault', publicUrl: vault, upstream: upstream.url, policy: { allow: [{ groups: ['admins'] }] } }],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await Promise.all([corp?.close(), contractor?.close(), upstream?.close()]);
});

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

async function signIn(providerId: string, login: string, password: string) {
  const browser = new ScriptedBrowser(['vault.localhost']);
  const first = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/${providerId}`), isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  await browser.request(callback!.href);
  const session = await browser.request(`${portal}/api/session`);
  expect(session.status).toBe(200);
  const csrf = JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string;
  return { browser, csrf, me: JSON.parse(session.body) as { user: { email: string; groups: string[]; admin: boolean } } };
}

/** Opens the vault app (handshake through the portal included): the final answer. */
async function openVault(browser: ScriptedBrowser): Promise<Hop> {
  return (await browser.follow(await browser.request(`${vault}/secret`, { headers: { accept: 'text/html' } }))).hop;
}

const send = (who: { browser: ScriptedBrowser; csrf: string }, method: string, path: string, body?: unknown) =>
  who.browser.request(`${portal}${path}`, {
    method,
    headers: { origin: portal, 'x-csrf-token': who.csrf, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const launcher = async (browser: ScriptedBrowser) => (JSON.parse((await browser.request(`${portal}/api/apps`)).body) as { apps: Array<{ id: string }> }).apps.map((app) => app.id);

describe('a contractor IdP asserting `admins`', () => {
  it('grants neither admin nor the admins-only app; the trusted IdP still does', async () => {
    const alice = await signIn('corp', 'alice@example.com', 'alice');
    expect(alice.me.user).toMatchObject({ admin: true, groups: ['staff', 'admins'] });
    expect(await launcher(alice.browser)).toEqual(['vault']);
    const allowed = await openVault(alice.browser);
    expect(allowed.status).toBe(200);
    expect(upstream.last?.headers['x-gatehouse-groups']).toBe('staff,admins');

    // alice adds the contractor's IdP in the console, limited to its domain, as an admin would.
    const created = await send(alice, 'POST', '/api/admin/providers', {
      id: 'contractor',
      name: 'Contractor IdP',
      issuer: contractor.issuer,
      clientId: 'gatehouse',
      clientSecret: SECRET,
      scopes: ['openid', 'email', 'profile', 'groups'],
      allowedDomains: ['partner.example'],
      pushedAuthorizationRequests: 'never',
    });
    expect(created.status).toBe(201);
    expect(JSON.parse(created.body)).toMatchObject({ trustGroups: false });
    expect(JSON.parse(created.body).groupPrefix).toBeUndefined();
    // Offered to people only once published (here knowingly, without a test sign-in).
    expect((await send(alice, 'POST', '/api/admin/providers/contractor/publish', { untested: true })).status).toBe(200);

    const carol = await signIn('contractor', 'carol@partner.example', 'carol');
    expect(carol.me.user).toMatchObject({ email: 'carol@partner.example', admin: false, groups: [] });
    expect((await carol.browser.request(`${portal}/api/admin/users`)).status).toBe(403);
    expect((await carol.browser.request(`${portal}/admin`, { headers: { accept: 'text/html' } })).status).toBe(403);
    expect(await launcher(carol.browser)).toEqual([]);
    const refused = await openVault(carol.browser);
    expect(refused.status).toBe(403);

    // The console's policy tester and user list agree with the proxy.
    const users = JSON.parse((await alice.browser.request(`${portal}/api/admin/users?query=carol`)).body) as { users: Array<{ id: string; admin: boolean; adminFromConfig: boolean }> };
    expect(users.users).toEqual([expect.objectContaining({ admin: false, adminFromConfig: false })]);
    const tested = JSON.parse((await send(alice, 'POST', '/api/admin/policy-test', { appId: 'vault', userId: users.users[0]!.id })).body);
    expect(tested).toMatchObject({ allow: false, subject: { groups: [] }, provider: { id: 'contractor' } });

    // With a prefix, carol's groups count only as contractor:admins: still not `admins`.
    const { id: _id, enabled: _enabled, source: _source, discovery: _discovery, publication: _publication, redirectUri: _r, backchannelLogoutUri: _b, hasClientSecret: _s, hasPrivateKey: _k, linkedIdentities: _l, warnings: _w, groupPrefix: _p, options, ...definition } = JSON.parse(created.body);
    // A preset's own options go beside the common fields in a definition (the view nests them).
    expect((await send(alice, 'PUT', '/api/admin/providers/contractor', { ...definition, ...options, groupPrefix: 'contractor:' })).status).toBe(200);
    expect(JSON.parse((await carol.browser.request(`${portal}/api/session`)).body).user).toMatchObject({ admin: false, groups: ['contractor:admins'] });
    expect((await openVault(carol.browser)).status).toBe(403);

    // Trusting the provider's bare groups is the admin's explicit choice: it counts at the next request,
    // and so does taking it back (no decision or assertion cached from before outlives the change).
    expect((await send(alice, 'PUT', '/api/admin/providers/contractor', { ...definition, trustGroups: true })).status).toBe(200);
    expect((await openVault(carol.browser)).status).toBe(200);
    expect(upstream.last?.headers['x-gatehouse-groups']).toBe('admins');
    // Still no Gatehouse admin: admins.groups believes `admins` from corp only.
    expect(JSON.parse((await carol.browser.request(`${portal}/api/session`)).body).user.admin).toBe(false);
    expect((await send(alice, 'PUT', '/api/admin/providers/contractor', { ...definition, trustGroups: false })).status).toBe(200);
    expect((await openVault(carol.browser)).status).toBe(403);
  });
});
