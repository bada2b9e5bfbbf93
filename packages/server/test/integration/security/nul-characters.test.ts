import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from '../support/browser.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';

// Threat class: a NUL character (U+0000) in attacker-chosen text that reaches the database. PostgreSQL's
// text refuses it — an unhandled 500 where SQLite would store it — and a C-string reader further on
// would read "admins\0x" as "admins". It is refused where it comes in: an IdP's answer with one fails
// verification (invalid_response), a logout token with one is malformed (400), an API request naming
// one is malformed (400). Run on both databases (the integration projects); on PostgreSQL it used to
// be a 500.

let idp: HostileIdp;
let gatehouse: RunningGatehouse;
const EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };

beforeAll(async () => {
  idp = await startHostileIdp('gatehouse');
  gatehouse = await startGatehouse({
    admins: { emails: ['mallory@example.com'] },
    providers: [{ id: 'hostile', name: 'Hostile IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true, trustGroups: true }],
  });
}, 60_000);
afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});
beforeEach(() => {
  idp.subject = 'mallory';
  idp.extraClaims = {};
});

async function signIn() {
  const browser = new ScriptedBrowser();
  const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/hostile`, { headers: { accept: 'text/html' } });
  expect(start.status).toBe(303);
  const { hop } = await browser.follow(start);
  return { browser, hop };
}

describe("an IdP's answer with a NUL character", () => {
  it('an honest answer signs in (the fixture itself works)', async () => {
    const { browser, hop } = await signIn();
    expect(hop.status).toBe(200);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeDefined();
  });

  it.each<[string, () => void]>([
    ['sub', () => (idp.subject = 'mal\u0000lory')],
    ['name', () => (idp.extraClaims = { name: 'Mallory\u0000 Admin' })],
    ['email', () => (idp.extraClaims = { email: 'mallory\u0000@example.com' })],
    ['a group', () => (idp.extraClaims = { groups: ['staff', 'admins\u0000x'] })],
    ['sid', () => (idp.extraClaims = { sid: 'sid\u0000' })],
    ['another claim', () => (idp.extraClaims = { department: 'ops\u0000' })],
  ])('in %s: refused as an answer that fails verification, no session', async (_claim, hostile) => {
    hostile();
    const { browser, hop } = await signIn();
    expect(hop.status).toBe(502);
    expect(hop.body).toContain('The answer from Hostile IdP could not be verified.');
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });
});

describe('a back-channel logout token with a NUL character', () => {
  const postLogout = (token: string) =>
    fetch(`${gatehouse.url}/.gatehouse/backchannel-logout/hostile`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: token }),
    });
  const claims = (overrides: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: idp.issuer, aud: 'gatehouse', iat: now, exp: now + 120, jti: crypto.randomUUID(), sub: 'mallory', sid: 'sid-1', events: EVENT, ...overrides };
  };

  it.each(['sub', 'sid', 'jti'])('in %s: 400 invalid_request, like any malformed token', async (claim) => {
    const response = await postLogout(await idp.signLogoutToken(claims({ [claim]: `x\u0000${claim}` })));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('an API request naming a NUL character', () => {
  let admin: ScriptedBrowser;
  beforeAll(async () => {
    ({ browser: admin } = await signIn());
  });

  it.each([
    ['a user id', '/api/admin/users/%00'],
    ['a user search', '/api/admin/users?query=a%00b'],
    ['an audit filter', '/api/admin/audit?type=sign_in%00'],
    ['an audit user filter', '/api/admin/audit?userId=%00'],
    ['a test sign-in result', '/api/admin/providers/hostile/tests/%00'],
  ])('%s: 400 bad_request', async (_what, path) => {
    const response = await admin.request(`${gatehouse.url}${path}`);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'bad_request' });
  });

  it("one's own session id: 400 bad_request", async () => {
    const { csrfToken } = JSON.parse((await admin.request(`${gatehouse.url}/api/csrf`)).body) as { csrfToken: string };
    const response = await admin.request(`${gatehouse.url}/api/me/sessions/%00`, { method: 'DELETE', headers: { origin: gatehouse.url, 'x-csrf-token': csrfToken } });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'bad_request' });
  });
});
