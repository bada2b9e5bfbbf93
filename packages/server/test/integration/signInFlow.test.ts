import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, type Hop, inputValue, ScriptedBrowser, submitIdpLogin } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/**
 * The whole authorization code flow over HTTP against the real development IdP process, and every
 * error a person can meet on the way, provoked for real.
 */
let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({
    redirectUris: [`${portal}/.gatehouse/callback/dev`, `${portal}/.gatehouse/callback/dev-par`],
    postLogoutRedirectUris: [`${portal}/signed-out`],
  });
  const dev = { name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'] };
  gatehouse = await startGatehouse({
    port,
    providers: [
      { id: 'dev', ...dev, pushedAuthorizationRequests: 'never' },
      { id: 'dev-par', ...dev, name: 'Development IdP (PAR)', pushedAuthorizationRequests: 'always' },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

/** Start at Gatehouse, arrive at the IdP's login form. */
async function toLoginForm(browser: ScriptedBrowser, provider = 'dev', rd = '/account'): Promise<{ start: Hop; form: Hop }> {
  const start = await browser.request(`${portal}/.gatehouse/sign-in/${provider}?rd=${encodeURIComponent(rd)}`);
  expect(start.status).toBe(303);
  const { hop: form } = await browser.follow(start);
  expect(form.status).toBe(200);
  expect(form.body).toContain('name="password"');
  return { start, form };
}

async function signIn(browser: ScriptedBrowser, login = 'alice@example.com', password = 'alice') {
  const { start, form } = await toLoginForm(browser);
  const callbackUrl = await submitIdpLogin(browser, form, login, password);
  const callback = await browser.request(callbackUrl.href);
  return { start, callbackUrl, callback };
}

describe('authorization code flow with the development IdP', () => {
  it('signs alice in: PKCE S256, state, nonce, iss, cookie attributes, session API', async () => {
    const browser = new ScriptedBrowser();
    const { start, callbackUrl, callback } = await signIn(browser);

    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('client_id')).toBe('gatehouse');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${portal}/.gatehouse/callback/dev`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(authorize.searchParams.get('nonce')!.length).toBeGreaterThanOrEqual(32);
    expect(authorize.searchParams.get('scope')).toBe('openid email profile groups offline_access');
    // The attempt is bound to this browser by an HttpOnly cookie.
    expect(start.headers.getSetCookie().join('\n')).toMatch(/gatehouse_signin=[^;]+;.*HttpOnly/i);

    // RFC 9207: the IdP names itself in the authorization response.
    expect(callbackUrl.searchParams.get('iss')).toBe(idp.issuer);
    expect(callbackUrl.searchParams.get('code')).toBeTruthy();

    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/account');
    const sessionCookie = callback.headers.getSetCookie().find((line) => line.startsWith('gatehouse_session='))!;
    expect(sessionCookie).toMatch(/; HttpOnly/i);
    expect(sessionCookie).toMatch(/; SameSite=Lax/i);
    expect(sessionCookie).toMatch(/; Path=\//i);
    expect(sessionCookie).not.toMatch(/; Secure/i); // plain-http localhost
    expect(sessionCookie).not.toMatch(/Domain=/i);

    const me = await browser.request(`${portal}/api/session`);
    expect(me.status).toBe(200);
    const body = JSON.parse(me.body);
    expect(body).toEqual({
      user: { id: expect.any(String), email: 'alice@example.com', name: 'Alice Example', picture: null, groups: ['staff', 'admins'], admin: false },
      session: { id: expect.any(String), createdAt: expect.any(String), expiresAt: expect.any(String), provider: { id: 'dev', name: 'Development IdP' } },
    });
    const secret = browser.cookie('localhost', 'gatehouse_session')!;
    expect(body.session.id).not.toBe(secret);
    expect(me.body).not.toContain(secret);
    expect(me.body).not.toMatch(/eyJ/); // no JWT of any kind
    expect(me.headers.get('cache-control')).toBe('no-store');

    // Tokens are encrypted at rest, the secret stored only hashed.
    const row = await gatehouse.services.database.db.selectFrom('sessions').selectAll().where('id', '=', body.session.id).executeTakeFirstOrThrow();
    expect(row.refresh_token_enc).toMatch(/^v1\./);
    expect(row.id_token_enc).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('pushed authorization requests (RFC 9126) when asked for', async () => {
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev-par`);
    const authorize = new URL(start.headers.get('location')!);
    expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const { hop: form } = await browser.follow(start);
    const callbackUrl = await submitIdpLogin(browser, form, 'bob@example.com', 'bob');
    const callback = await browser.request(callbackUrl.href);
    expect(callback.status).toBe(303);
    expect(JSON.parse((await browser.request(`${portal}/api/session`)).body).user.email).toBe('bob@example.com');
  });

  it('rotates the session at sign-in: the previous cookie of this browser dies', async () => {
    const browser = new ScriptedBrowser();
    await signIn(browser);
    const first = browser.cookie('localhost', 'gatehouse_session')!;
    // The IdP still has its own session, so it answers at once without a form.
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev`);
    const { stoppedAt } = await browser.follow(start, (url) => url.pathname.startsWith('/.gatehouse/callback/'));
    expect((await browser.request(stoppedAt!.href)).status).toBe(303);
    const second = browser.cookie('localhost', 'gatehouse_session')!;
    expect(second).not.toBe(first);
    const replay = await fetch(`${portal}/api/session`, { headers: { cookie: `gatehouse_session=${first}` } });
    expect(replay.status).toBe(401);
  });

  it('sends the person back to a validated return-to URL only', async () => {
    const browser = new ScriptedBrowser();
    const { form } = await toLoginForm(browser, 'dev', 'https://evil.example/phish');
    const callback = await browser.request((await submitIdpLogin(browser, form, 'alice@example.com', 'alice')).href);
    expect(callback.headers.get('location')).toBe('/account');
  });
});

describe('sign-out', () => {
  it('needs CSRF proof, ends the session, logs out at the IdP and lands on /signed-out', async () => {
    const browser = new ScriptedBrowser();
    await signIn(browser);
    const secret = browser.cookie('localhost', 'gatehouse_session')!;
    const { csrfToken } = JSON.parse((await browser.request(`${portal}/api/csrf`)).body) as { csrfToken: string };

    // Threat: cross-site request forgery. A same-site page on another port (the IdPs are same-site with
    // the portal on localhost) posts the form: wrong Origin, or no token, is refused.
    const forged = await browser.request(`${portal}/.gatehouse/sign-out`, { form: { csrf_token: csrfToken }, headers: { origin: 'http://localhost:9999' } });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('csrf_failed');
    const tokenless = await browser.request(`${portal}/.gatehouse/sign-out`, { form: {}, headers: { origin: portal } });
    expect(tokenless.status).toBe(403);
    const wrongToken = await browser.request(`${portal}/.gatehouse/sign-out`, { form: { csrf_token: 'x'.repeat(43) }, headers: { origin: portal } });
    expect(wrongToken.status).toBe(403);
    expect((await browser.request(`${portal}/api/session`)).status).toBe(200);
    // A GET never signs out.
    expect((await browser.request(`${portal}/.gatehouse/sign-out`)).status).toBe(405);

    const signOut = await browser.request(`${portal}/.gatehouse/sign-out`, { form: { csrf_token: csrfToken }, headers: { origin: portal } });
    expect(signOut.status).toBe(303);
    const endSession = new URL(signOut.headers.get('location')!);
    expect(endSession.origin).toBe(idp.issuer);
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^eyJ/);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${portal}/signed-out`);
    expect(signOut.headers.getSetCookie().join('\n')).toMatch(/gatehouse_session=;/);
    // A logout state (RP-Initiated Logout 1.0 §2), kept for this browser in a short-lived HttpOnly cookie.
    const state = endSession.searchParams.get('state')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(browser.cookie('localhost', 'gatehouse_signout')).toBe(state);
    expect(browser.cookieAttributes('localhost', 'gatehouse_signout')).toMatch(/HttpOnly/i);
    expect(browser.cookieAttributes('localhost', 'gatehouse_signout')).toMatch(/SameSite=Lax/i);
    expect(browser.cookieAttributes('localhost', 'gatehouse_signout')).toMatch(/Max-Age=600/i);

    // The IdP's logout confirmation auto-submits in a browser; submit it as the script would.
    const { hop: confirm } = await browser.follow(signOut);
    const logout = await browser.request(new URL(formAction(confirm.body)!, confirm.url).href, {
      form: { xsrf: inputValue(confirm.body, 'xsrf') ?? '', logout: 'yes' },
    });
    const { stoppedAt } = await browser.follow(logout, (url) => url.origin === portal);
    // oidc-provider hands the state back with the browser.
    expect(stoppedAt?.href).toBe(`${portal}/signed-out?state=${state}`);
    // Recognised, then dropped from the address: the bare page, the cookie gone.
    const back = await browser.request(stoppedAt!.href);
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/signed-out');
    expect(back.headers.get('cache-control')).toBe('no-store');
    expect(browser.cookie('localhost', 'gatehouse_signout')).toBeUndefined();
    const page = await browser.request(`${portal}/signed-out`);
    expect(page.status).toBe(200);

    expect((await browser.request(`${portal}/api/session`)).status).toBe(401);
    const replay = await fetch(`${portal}/api/session`, { headers: { cookie: `gatehouse_session=${secret}` } });
    expect(replay.status).toBe(401);
    expect(replay.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('the logout state on the way back to /signed-out', () => {
  /**
   * Threat: a crafted /signed-out link (someone else's state, a script in the state). The session ended
   * before the browser left for the IdP, so the state decides nothing; it must never be reflected into
   * the page, nor believed. Whatever it is, the browser gets the bare page, and this browser's own
   * state, if any, is spent.
   */
  it.each([
    ['a state this browser was not given', 'someone-elses-state', undefined],
    ['a state that does not match this browser’s', 'x'.repeat(43), 'y'.repeat(43)],
    ['markup in the state', '"><script>alert(1)</script>', 'y'.repeat(43)],
    ['a very long state', 'a'.repeat(10_000), 'a'.repeat(43)],
    ['non-ASCII of the same length', 'é'.repeat(43), 'y'.repeat(43)],
  ])('%s: the bare page, nothing reflected', async (_name, state, cookie) => {
    const browser = new ScriptedBrowser();
    if (cookie) browser.setCookie('localhost', 'gatehouse_signout', cookie);
    const back = await browser.request(`${portal}/signed-out?state=${encodeURIComponent(state)}`);
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/signed-out');
    expect(back.body).not.toContain(state.slice(0, 40));
    if (cookie) expect(back.headers.getSetCookie().join('\n')).toMatch(/gatehouse_signout=;/);
    expect((await browser.request(`${portal}/api/session`)).status).toBe(401);
  });

  it('the IdP sent no state back: the cookie is spent, the page shown', async () => {
    const browser = new ScriptedBrowser();
    browser.setCookie('localhost', 'gatehouse_signout', 'y'.repeat(43));
    const page = await browser.request(`${portal}/signed-out`);
    expect(page.status).toBe(200);
    expect(page.headers.getSetCookie().join('\n')).toMatch(/gatehouse_signout=;/);
  });

  it('a plain visit is the page, with no cookie set', async () => {
    const page = await new ScriptedBrowser().request(`${portal}/signed-out`);
    expect(page.status).toBe(200);
    expect(page.headers.getSetCookie()).toEqual([]);
  });
});

describe('errors a person can meet', () => {
  it('unknown state', async () => {
    const browser = new ScriptedBrowser();
    const response = await browser.request(`${portal}/.gatehouse/callback/dev?code=abc&state=made-up&iss=${encodeURIComponent(idp.issuer)}`);
    expect(response.status).toBe(400);
    expect(response.body).toContain('This sign-in took too long or was already used. Start again.');
    expect(response.body).toMatch(/Reference <code>[0-9a-f]{12}<\/code>/);
  });

  it('reused state: a callback URL works once', async () => {
    const browser = new ScriptedBrowser();
    const { callbackUrl, callback } = await signIn(browser);
    expect(callback.status).toBe(303);
    const again = await browser.request(callbackUrl.href);
    expect(again.status).toBe(400);
    expect(again.body).toContain('sign_in_expired');
  });

  it('expired state', async () => {
    const browser = new ScriptedBrowser();
    const { form } = await toLoginForm(browser);
    await gatehouse.services.database.db.updateTable('sign_in_attempts').set({ expires_at: Date.now() - 1 }).execute();
    const callback = await browser.request((await submitIdpLogin(browser, form, 'alice@example.com', 'alice')).href);
    expect(callback.status).toBe(400);
    expect(callback.body).toContain('sign_in_expired');
  });

  // Threat: login CSRF / stolen callback URL. A callback URL completed in another browser must not
  // sign that browser in (nor the attacker's account into the victim's browser).
  it('a callback URL from another browser is refused', async () => {
    const victim = new ScriptedBrowser();
    const { form } = await toLoginForm(victim);
    const callbackUrl = await submitIdpLogin(victim, form, 'alice@example.com', 'alice');
    const attacker = new ScriptedBrowser();
    const stolen = await attacker.request(callbackUrl.href);
    expect(stolen.status).toBe(400);
    expect(stolen.body).toContain('sign_in_expired');
    expect(attacker.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });

  // Threat: mix-up. An attempt started with one provider cannot be completed at another's callback.
  it('an attempt for one provider cannot complete at another provider’s callback', async () => {
    const browser = new ScriptedBrowser();
    const { form } = await toLoginForm(browser, 'dev');
    const callbackUrl = await submitIdpLogin(browser, form, 'alice@example.com', 'alice');
    const crossed = await browser.request(callbackUrl.href.replace('/callback/dev?', '/callback/dev-par?'));
    expect(crossed.status).toBe(400);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });

  it('the IdP says access_denied (Cancel on its form)', async () => {
    const browser = new ScriptedBrowser();
    const { form } = await toLoginForm(browser);
    const cancelAction = [...form.body.matchAll(/<form[^>]*action="([^"]*)"/gi)].map((m) => m[1]!).find((a) => a.endsWith('/abort'))!;
    const cancelled = await browser.request(new URL(cancelAction, form.url).href, { form: {} });
    const { hop } = await browser.follow(cancelled);
    expect(hop.url).toContain('/.gatehouse/callback/dev');
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('Development IdP did not sign you in');
    expect(hop.body).toContain('sign_in_denied');
  });

  it('the IdP is unreachable: a clear page, and the node stays ready', async () => {
    const closedPort = await freePort();
    const lonely = await startGatehouse({
      providers: [{ id: 'gone', name: 'Gone IdP', issuer: `http://127.0.0.1:${closedPort}`, clientId: 'x', clientSecret: 'y' }],
      metrics: { listen: { port: 0 } },
    });
    try {
      const browser = new ScriptedBrowser();
      const response = await browser.request(`${lonely.url}/.gatehouse/sign-in/gone`);
      expect(response.status).toBe(502);
      expect(response.body).toContain('We couldn&#39;t reach Gone IdP. Try again in a minute.');
      expect(response.body).toContain('provider_unavailable');
      const ready = await fetch(`${lonely.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
      // Why, for the operator: on the metrics listener.
      expect(await (await fetch(lonely.readinessUrl!)).json()).toMatchObject({ checks: { database: 'ok', providers: [{ id: 'gone', status: 'unavailable' }] } });
    } finally {
      await lonely.close();
    }
  });

  it('an unknown provider is a 404 page', async () => {
    const response = await new ScriptedBrowser().request(`${portal}/.gatehouse/sign-in/nobody`);
    expect(response.status).toBe(404);
  });
});
