import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from './support/browser.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';

/**
 * Refresh and back-channel logout against an IdP whose every answer the test controls, for the cases a
 * real IdP will not produce on demand (forged, replayed or malformed logout tokens; refreshes that turn
 * into another subject).
 */
let idp: HostileIdp;
let gatehouse: RunningGatehouse;
const CLIENT_SECRET = 'client-secret-of-gatehouse';
const EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };

beforeAll(async () => {
  idp = await startHostileIdp('gatehouse');
  const base = { name: 'Hostile IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: CLIENT_SECRET, createUsers: true };
  gatehouse = await startGatehouse({
    providers: [
      { id: 'hostile', ...base },
      // The same issuer and subjects under a second provider id: a logout for one must never end the other.
      { id: 'twin', ...base, name: 'Twin IdP', trustEmail: true },
    ],
  });
});
afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});
beforeEach(() => {
  idp.mode = 'honest';
  idp.refreshMode = 'honest';
});

async function signIn(provider = 'hostile', sid = `sid-${Math.random().toString(36).slice(2)}`) {
  idp.sid = sid;
  const browser = new ScriptedBrowser();
  const { hop } = await browser.follow(await browser.request(`${gatehouse.url}/.gatehouse/sign-in/${provider}`));
  expect(hop.status).toBe(200);
  const me = JSON.parse((await browser.request(`${gatehouse.url}/api/session`)).body);
  return { browser, sid, sessionId: me.session.id as string };
}

const alive = async (browser: ScriptedBrowser) => (await browser.request(`${gatehouse.url}/api/session`)).status === 200;

const postLogout = (token: string, provider = 'hostile') =>
  fetch(`${gatehouse.url}/.gatehouse/backchannel-logout/${provider}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }),
  });

function logoutClaims(overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return { iss: idp.issuer, aud: 'gatehouse', iat: now, exp: now + 120, jti: crypto.randomUUID(), sub: 'mallory', sid: idp.sid, events: EVENT, ...overrides };
}

describe('back-channel logout (OIDC Back-Channel Logout 1.0 §2.6)', () => {
  it('a valid logout token for the IdP session ends it: 200, no-store', async () => {
    const { browser, sid } = await signIn();
    const other = await signIn();
    const response = await postLogout(await idp.signLogoutToken(logoutClaims({ sid })));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await alive(browser)).toBe(false);
    // Only that IdP session: another session of the same person (another sid) lives on.
    expect(await alive(other.browser)).toBe(true);
  });

  it('a logout token with sub only ends that subject’s sessions of that provider, never another provider’s', async () => {
    const mine = await signIn('hostile');
    const twin = await signIn('twin');
    const response = await postLogout(await idp.signLogoutToken(logoutClaims({ sid: undefined })));
    expect(response.status).toBe(200);
    expect(await alive(mine.browser)).toBe(false);
    expect(await alive(twin.browser)).toBe(true);
  });

  // Each forged or malformed token is refused with 400, and the session survives.
  const invalid: Array<[string, () => Promise<string> | string]> = [
    ['alg none', () => idp.unsignedToken(logoutClaims())],
    ['HS256 keyed with the client secret (algorithm confusion)', () => idp.hmacToken(logoutClaims(), CLIENT_SECRET)],
    ['signed with a key the IdP does not publish', () => idp.signLogoutToken(logoutClaims(), { key: 'impostor' })],
    ['wrong audience', () => idp.signLogoutToken(logoutClaims({ aud: 'someone-else' }))],
    ['wrong issuer', () => idp.signLogoutToken(logoutClaims({ iss: 'https://evil.example' }))],
    ['no events claim', () => idp.signLogoutToken(logoutClaims({ events: undefined }))],
    ['another event', () => idp.signLogoutToken(logoutClaims({ events: { 'http://schemas.openid.net/event/other': {} } }))],
    ['event member not an object', () => idp.signLogoutToken(logoutClaims({ events: { 'http://schemas.openid.net/event/backchannel-logout': 'yes' } }))],
    ['with a nonce (an ID token passed off as a logout token)', () => idp.signLogoutToken(logoutClaims({ nonce: 'n' }))],
    ['neither sub nor sid', () => idp.signLogoutToken(logoutClaims({ sub: undefined, sid: undefined }))],
    ['expired', () => idp.signLogoutToken(logoutClaims({ iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 300 }))],
    ['no jti', () => idp.signLogoutToken(logoutClaims({ jti: undefined }))],
    ['typed as an access token', () => idp.signLogoutToken(logoutClaims(), { typ: 'at+jwt' })],
    ['not a JWT at all', () => 'not-a-token'],
  ];
  it.each(invalid)('%s → 400, session kept', async (_name, token) => {
    const { browser, sid } = await signIn();
    idp.sid = sid;
    const response = await postLogout(await token());
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    expect(await alive(browser)).toBe(true);
  });

  it('a replayed logout token (same jti) is refused', async () => {
    const first = await signIn();
    const token = await idp.signLogoutToken(logoutClaims({ sid: first.sid }));
    expect((await postLogout(token)).status).toBe(200);
    const second = await signIn('hostile', first.sid);
    const replay = await postLogout(token);
    expect(replay.status).toBe(400);
    expect(await alive(second.browser)).toBe(true);
  });

  it('a missing logout_token or unknown provider is 400', async () => {
    expect((await fetch(`${gatehouse.url}/.gatehouse/backchannel-logout/hostile`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })).status).toBe(400);
    expect((await postLogout(await idp.signLogoutToken(logoutClaims()), 'nobody')).status).toBe(400);
  });
});

describe('claims refresh', () => {
  async function makeStale(sessionId: string) {
    await gatehouse.services.database.db.updateTable('sessions').set({ claims_checked_at: 0 }).where('id', '=', sessionId).execute();
    gatehouse.services.resolver.invalidate(sessionId);
  }
  const row = (id: string) => gatehouse.services.database.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('redeems the session’s own refresh token when claims are due, rotating it', async () => {
    const { browser, sessionId } = await signIn();
    const before = await row(sessionId);
    await makeStale(sessionId);
    expect(await alive(browser)).toBe(true);
    const after = await row(sessionId);
    expect(after.claims_checked_at).toBeGreaterThan(0);
    expect(after.refresh_token_enc).not.toBe(before.refresh_token_enc);
  });

  it('invalid_grant ends the session', async () => {
    const { browser, sessionId } = await signIn();
    idp.refreshMode = 'invalid_grant';
    await makeStale(sessionId);
    expect(await alive(browser)).toBe(false);
    expect((await row(sessionId)).revoked_reason).toBe('refresh-failed');
  });

  // Threat: a refresh that swaps the person (another sub) must not keep the session.
  it('a refreshed ID token about another subject ends the session', async () => {
    const { browser, sessionId } = await signIn();
    idp.refreshMode = 'other-subject';
    await makeStale(sessionId);
    expect(await alive(browser)).toBe(false);
  });

  it('an IdP that is down keeps the session and tries again later', async () => {
    const { browser, sessionId } = await signIn();
    idp.refreshMode = 'unavailable';
    await makeStale(sessionId);
    expect(await alive(browser)).toBe(true);
    const after = await row(sessionId);
    expect(after.revoked_at).toBeNull();
    expect(Date.now() - after.claims_checked_at).toBeGreaterThan(10 * 60_000); // due again in about a minute
  });

  it('two sessions of one person refresh independently', async () => {
    const a = await signIn();
    const b = await signIn();
    await makeStale(a.sessionId);
    expect(await alive(a.browser)).toBe(true);
    await makeStale(b.sessionId);
    expect(await alive(b.browser)).toBe(true);
    expect(await alive(a.browser)).toBe(true);
  });
});
