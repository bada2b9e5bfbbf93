import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from './support/browser.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startPresetIdp, type PresetIdp } from './support/presetIdp.js';
import { startUpstream, type Upstream } from './support/upstream.js';

/**
 * The OpenID Connect presets' quirks, against loopback stand-ins answering as Google, Microsoft Entra
 * ID and Microsoft Graph document they do (the real ones cannot be reached from a test): sign-in
 * through the real callback, refresh, groups reaching a policy decision, and the page a person sees.
 */
const TENANT_A = '11111111-1111-4111-8111-111111111111';
const TENANT_B = '22222222-2222-4222-8222-222222222222';
const STAFF = 'aaaaaaaa-0000-4000-8000-000000000001';

let google: PresetIdp;
let entra: PresetIdp;
let upstream: Upstream;
let gatehouse: RunningGatehouse;
let staffApp: string;

beforeAll(async () => {
  google = await startPresetIdp({ clientId: 'gatehouse-google' });
  entra = await startPresetIdp({
    clientId: 'gatehouse-entra',
    issuer: () => 'https://login.microsoftonline.com/{tenantid}/v2.0',
    servedAs: 'https://login.microsoftonline.com',
    userinfo: false,
  });
  upstream = await startUpstream();
  const port = await freePort();
  staffApp = `http://staff.localhost:${port}`;
  gatehouse = await startGatehouse({
    port,
    providers: [
      { kind: 'google', id: 'google', name: 'Google', issuer: google.origin, clientId: 'gatehouse-google', clientSecret: 's', hostedDomains: ['example.com'] },
      {
        kind: 'entra',
        id: 'entra',
        name: 'Contoso',
        tenant: 'organizations',
        tenants: [TENANT_A],
        clientId: 'gatehouse-entra',
        clientSecret: 's',
        trustGroups: true,
        createUsers: true,
        loopbackStandIn: entra.origin,
      },
    ],
    apps: [{ id: 'staff', name: 'Staff app', publicUrl: staffApp, upstream: upstream.url, policy: { allow: [{ groups: [STAFF] }] } }],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await upstream?.close();
  await google?.close();
  await entra?.close();
});

async function signIn(provider: string) {
  const browser = new ScriptedBrowser(['staff.localhost']);
  const { hop } = await browser.follow(await browser.request(`${gatehouse.url}/.gatehouse/sign-in/${provider}`, { headers: { accept: 'text/html' } }));
  return { browser, hop, signedIn: browser.cookie('localhost', 'gatehouse_session') !== undefined };
}

async function sessionId(browser: ScriptedBrowser): Promise<string> {
  return JSON.parse((await browser.request(`${gatehouse.url}/api/session`)).body).session.id as string;
}

/** The claims are due for a re-check at the next request. */
async function makeStale(id: string) {
  await gatehouse.services.database.db.updateTable('sessions').set({ claims_checked_at: 0 }).where('id', '=', id).execute();
  gatehouse.services.resolver.invalidate(id);
}

const alive = async (browser: ScriptedBrowser) => (await browser.request(`${gatehouse.url}/api/session`)).status === 200;

/** Opens the staff app (through the portal's handshake): the upstream's 200, or Gatehouse's answer. */
async function openStaffApp(browser: ScriptedBrowser) {
  const { hop } = await browser.follow(await browser.request(`${staffApp}/`, { headers: { accept: 'text/html' } }));
  return hop;
}

describe('Google (kind: google)', () => {
  beforeEach(() => {
    google.claims = { sub: `g-${crypto.randomUUID()}`, email: `ada-${crypto.randomUUID().slice(0, 8)}@example.com`, email_verified: true, name: 'Ada', hd: 'example.com' };
    google.refreshMode = 'honest';
  });

  it('asks for hd and signs in an account of the hosted domain', async () => {
    const { hop, signedIn } = await signIn('google');
    expect(google.lastAuthorization?.get('hd')).toBe('example.com');
    expect(google.lastAuthorization?.get('scope')).toBe('openid email profile');
    expect(hop.status).toBe(200);
    expect(signedIn).toBe(true);
  });

  // Threat: hd is only a hint in the authorization request: a personal Gmail account (no hd claim) or
  // another Workspace tenant (another hd) comes back just the same, and must be refused.
  it.each([
    ['a personal Gmail account (no hd)', undefined],
    ['another Workspace domain', 'evil.example'],
  ])('refuses %s with a page saying so, and no session', async (_case, hd) => {
    google.claims = { ...google.claims, email: 'ada@gmail.com', hd };
    const { hop, signedIn } = await signIn('google');
    expect(hop.status).toBe(403);
    expect(hop.headers.get('content-type')).toMatch(/^text\/html/);
    expect(hop.body).toContain('Your account at Google is not in an organisation allowed here.');
    expect(hop.body).not.toContain('hostedDomains');
    expect(signedIn).toBe(false);
    // The reason the rule computed, for admins: in the audit event, never on the person's page.
    expect((await lastFailure()).details).toMatchObject({ code: 'sign_in_not_allowed', reason: 'hosted_domain_not_allowed', why: expect.stringContaining(hd ?? 'no hd claim') });
    expect(hop.body).not.toContain(hd ?? 'no hd claim');
  });

  it('checks hd again at every refresh: an account moved out of the domain loses its session', async () => {
    const { browser } = await signIn('google');
    const id = await sessionId(browser);
    await makeStale(id);
    expect(await alive(browser)).toBe(true);
    google.claims = { ...google.claims, hd: 'elsewhere.example' };
    await makeStale(id);
    expect(await alive(browser)).toBe(false);
  });

  it('a revoked refresh token ends the session', async () => {
    const { browser } = await signIn('google');
    google.refreshMode = 'invalid_grant';
    await makeStale(await sessionId(browser));
    expect(await alive(browser)).toBe(false);
  });
});

describe('Microsoft Entra ID (kind: entra, multi-tenant)', () => {
  beforeEach(() => {
    entra.claims = { sub: `e-${crypto.randomUUID()}`, oid: crypto.randomUUID(), tid: TENANT_A, email: `ada-${crypto.randomUUID().slice(0, 8)}@contoso.example`, xms_edov: true, name: 'Ada', groups: [STAFF] };
    entra.issuerTenant = undefined;
    entra.refreshMode = 'honest';
    entra.graph = { mode: 'ok', groups: [], pageSize: 100, requests: 0 };
  });

  it('signs in a person of an admitted tenant (iss checked against the {tenantid} template), whose groups open the app', async () => {
    const { browser, hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(200);
    expect(signedIn).toBe(true);
    expect((await openStaffApp(browser)).status).toBe(200);
    expect(upstream.last?.headers['x-gatehouse-groups']).toBe(STAFF);
  });

  // Threat: Entra's email claim is whatever a tenant admin typed; it sends no email_verified. Without
  // xms_edov (the tenant verified the email's domain) it is not a verified email, and an unknown person
  // is not created from it.
  it('without xms_edov the email is not verified: a person unknown to Gatehouse is refused', async () => {
    entra.claims = { ...entra.claims, xms_edov: undefined, email: 'ceo@contoso.example' };
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(403);
    expect(signedIn).toBe(false);
  });

  // Threat: a multi-tenant app admits every Entra ID tenant in the world unless tid is checked.
  it('refuses a person of another tenant with a page saying so', async () => {
    entra.claims = { ...entra.claims, tid: TENANT_B, email: 'eve@fabrikam.example' };
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('Your account at Contoso belongs to an organisation that is not allowed here.');
    expect(signedIn).toBe(false);
    expect((await lastFailure()).details).toMatchObject({ code: 'sign_in_not_allowed', reason: 'tenant_not_allowed', why: expect.stringContaining(TENANT_B) });
  });

  // Threat: a token whose tid names an admitted tenant but which another tenant issued.
  it('refuses an ID token whose iss is not the template with its own tid', async () => {
    entra.issuerTenant = TENANT_B;
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(502);
    expect(hop.body).toContain('The answer from Contoso could not be verified.');
    expect(signedIn).toBe(false);
  });

  it('group overage: the groups are read from Microsoft Graph, every page, with the access token', async () => {
    entra.claims = { ...entra.claims, groups: undefined, _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: 'https://evil.example/steal' } } };
    entra.graph = { mode: 'ok', groups: ['g-1', 'g-2', 'g-3', STAFF, 'g-5'], pageSize: 2, requests: 0 };
    const { browser, signedIn } = await signIn('entra');
    expect(signedIn).toBe(true);
    expect(entra.graph.requests).toBe(3);
    expect((await openStaffApp(browser)).status).toBe(200);
    expect(String(upstream.last?.headers['x-gatehouse-groups']).split(',').sort()).toEqual(['g-1', 'g-2', 'g-3', STAFF, 'g-5'].sort());

    // At refresh the groups are read again: removed from staff in Entra, the app closes.
    entra.graph.groups = ['g-1'];
    await makeStale(await sessionId(browser));
    expect((await openStaffApp(browser)).status).toBe(403);
  });

  it('group overage without the Graph permission (403) refuses the sign-in and says why', async () => {
    entra.claims = { ...entra.claims, groups: undefined, _claim_names: { groups: 'src1' } };
    entra.graph.mode = 'forbidden';
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('GroupMember.Read.All');
    expect(signedIn).toBe(false);
  });

  it('Graph rate-limited (429): the sign-in says try again, no session', async () => {
    entra.claims = { ...entra.claims, groups: undefined, _claim_names: { groups: 'src1' } };
    entra.graph.mode = 'rate-limited';
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(502);
    expect(hop.body).toContain('couldn');
    expect(signedIn).toBe(false);
  });

  it('at refresh, Graph rate-limited keeps the session for later; Graph refusing the token ends it', async () => {
    entra.claims = { ...entra.claims, groups: undefined, _claim_names: { groups: 'src1' } };
    entra.graph.groups = [STAFF];
    const { browser } = await signIn('entra');
    const id = await sessionId(browser);
    entra.graph.mode = 'rate-limited';
    await makeStale(id);
    expect(await alive(browser)).toBe(true);
    entra.graph.mode = 'revoked';
    await makeStale(id);
    expect(await alive(browser)).toBe(false);
  });

  // Threat: a nextLink pointing off Graph would receive the person's access token.
  it('refuses a Graph nextLink to another origin without following it', async () => {
    entra.claims = { ...entra.claims, groups: undefined, _claim_names: { groups: 'src1' } };
    entra.graph = { mode: 'ok', groups: ['g-1', 'g-2', STAFF], pageSize: 1, requests: 0, nextLinkOrigin: 'https://evil.example' };
    const { hop, signedIn } = await signIn('entra');
    expect(hop.status).toBe(502);
    expect(entra.graph.requests).toBe(1);
    expect(signedIn).toBe(false);
  });

  it('a revoked refresh token ends the session', async () => {
    const { browser } = await signIn('entra');
    entra.refreshMode = 'invalid_grant';
    await makeStale(await sessionId(browser));
    expect(await alive(browser)).toBe(false);
  });
});

async function lastFailure() {
  const { events } = await gatehouse.services.audit.query({ type: 'sign_in_failed' }, 1, 1);
  return events[0]!;
}
