import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDemoApp, type DemoApp } from '../src/startDemoApp.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../src/rp/logoutToken.js';
import { Browser, form, freePort, startLogoutRelay, startOpenIdProvider, type OpenIdProvider } from './support/openIdProvider.js';

/**
 * The demo app as an OpenID Connect relying party against a real OpenID Provider process. Only the
 * issuer and the standard endpoints (discovery, authorization, token, userinfo, end_session, JWKS,
 * back-channel logout) are used, so another OP — Gatehouse — takes the place of this one by its issuer.
 */
const CLIENT_ID = 'demo';
const CLIENT_SECRET = 'demo-secret-for-the-test-only-0123456789';

let op: OpenIdProvider;
let demo: DemoApp;
let demoUrl: string;
let relay: Awaited<ReturnType<typeof startLogoutRelay>>;
/** The demo as a public client (no secret, PKCE), as the development defaults register it. */
let publicDemo: DemoApp;
let publicDemoUrl: string;

beforeAll(async () => {
  const demoPort = await freePort();
  demoUrl = `http://127.0.0.1:${demoPort}`;
  const publicDemoPort = await freePort();
  publicDemoUrl = `http://127.0.0.1:${publicDemoPort}`;
  relay = await startLogoutRelay(() => `${demoUrl}/backchannel-logout`);
  op = await startOpenIdProvider([
    {
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUris: [`${demoUrl}/callback`],
      postLogoutRedirectUris: [`${demoUrl}/signed-out`],
      backchannelLogoutUri: `${relay.url}/demo`,
    },
    { clientId: 'demo-public', redirectUris: [`${publicDemoUrl}/callback`], postLogoutRedirectUris: [`${publicDemoUrl}/signed-out`], backchannelLogoutUri: `${publicDemoUrl}/backchannel-logout` },
    // Another app of the same OP: its logout tokens are real, and addressed to it, not to the demo.
    {
      clientId: 'other-app',
      clientSecret: 'other-secret-for-the-test-only-0123456789',
      redirectUris: ['http://127.0.0.1:9/callback'],
      postLogoutRedirectUris: [],
      backchannelLogoutUri: `${relay.url}/other`,
    },
  ]);
  demo = await startDemoApp({
    port: demoPort,
    host: '127.0.0.1',
    oidc: { issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, publicUrl: demoUrl, guardedUrl: 'http://whoami.localhost:4180' },
  });
  publicDemo = await startDemoApp({ port: publicDemoPort, host: '127.0.0.1', oidc: { issuer: op.issuer, clientId: 'demo-public', publicUrl: publicDemoUrl } });
});

afterAll(async () => {
  await publicDemo?.close();
  await demo?.close();
  await op?.close();
  await relay?.close();
});

/** Signs alice in to the demo: Sign in with Gatehouse → the OP's login form → back to the demo. */
async function signIn(browser = new Browser()): Promise<{ browser: Browser; page: string }> {
  const { response: loginForm, url } = await browser.follow(`${demoUrl}/login`);
  expect(new URL(url).origin).toBe(op.issuer);
  expect(loginForm.status).toBe(200);
  const { response, url: landed } = await browser.follow(`${url}/login`, form({ login: 'alice@example.com', password: 'alice' }));
  expect(landed).toBe(`${demoUrl}/me`);
  expect(response.status).toBe(200);
  return { browser, page: await response.text() };
}

/** Confirms a sign-out at the OP's end_session page (its form, submitted as the page would). */
async function confirmOpLogout(browser: Browser, page: Response, pageUrl: string) {
  const html = await page.text();
  const action = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"/.exec(html)?.[1] ?? /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  expect(action && xsrf).toBeTruthy();
  return browser.follow(new URL(action!.replace(/&amp;/g, '&'), pageUrl).href, form({ xsrf: xsrf!, logout: 'yes' }));
}

async function signedIn(browser: Browser): Promise<boolean> {
  const response = await browser.request(`${demoUrl}/me`);
  return response.status === 200;
}

function postLogoutToken(token: string) {
  return fetch(`${demoUrl}/backchannel-logout`, form({ logout_token: token }));
}

describe('Sign in with Gatehouse (the demo as an OpenID Connect client)', () => {
  it('home page offers both ways, each in a sentence', async () => {
    const response = await fetch(`${demoUrl}/`);
    const html = await response.text();
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain("Behind Gatehouse's guard");
    expect(html).toContain('href="http://whoami.localhost:4180"');
    expect(html).toContain('Sign in with Gatehouse</button>');
  });

  it('starts a code flow with PKCE S256, state and nonce, in a cookie HttpOnly and SameSite=Lax', async () => {
    const response = await fetch(`${demoUrl}/login`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const authorize = new URL(response.headers.get('location')!);
    expect(authorize.origin).toBe(op.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: `${demoUrl}/callback`,
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^[\w-]{20,}$/),
      nonce: expect.stringMatching(/^[\w-]{20,}$/),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    });
    const cookie = response.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^demo_sign_in=[\w-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
  });

  it('signs in and shows the ID token claims and userinfo, row by row', async () => {
    const { browser, page } = await signIn();
    expect(browser.cookie('127.0.0.1', 'demo_session')).toMatch(/^[\w-]{43}$/);
    expect(page).toContain('<h2 id="id-token">ID token claims</h2>');
    expect(page).toMatch(/<tr><th scope="row">iss<\/th><td><code>http:\/\/localhost:\d+<\/code>/);
    expect(page).toContain('<tr><th scope="row">aud</th><td><code>demo</code>');
    expect(page).toContain('<tr><th scope="row">email</th><td><code>alice@example.com</code>');
    expect(page).toContain('<tr><th scope="row">groups</th><td><code>[&quot;staff&quot;,&quot;admins&quot;]</code>');
    // The userinfo section holds the same person, from the userinfo endpoint.
    expect(page.slice(page.indexOf('id="userinfo"'))).toContain('<tr><th scope="row">name</th><td><code>Alice Example</code>');
    expect(page).toContain('<form method="post" action="/logout">');
  });

  // Threat: login CSRF, an attacker's own authorization response delivered to the victim's browser.
  it('refuses a callback this browser did not start, and a state that does not match', async () => {
    const stranger = await fetch(`${demoUrl}/callback?code=x&state=y&iss=${encodeURIComponent(op.issuer)}`);
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('Sign-in not recognised');

    const browser = new Browser();
    const { url } = await browser.follow(`${demoUrl}/login`);
    await browser.follow(`${url}/login`, { ...form({ login: 'alice@example.com', password: 'alice' }) });
    // A second sign-in started in this browser, answered with a state that is not its own.
    const started = await browser.request(`${demoUrl}/login`);
    expect(started.status).toBe(303);
    const forged = await browser.request(`${demoUrl}/callback?code=abc&state=forged&iss=${encodeURIComponent(op.issuer)}`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('could not be verified');
  });

  it('signs out at the OP (RP-initiated logout with id_token_hint) and lands on the registered page', async () => {
    const { browser } = await signIn();
    const logout = await browser.request(`${demoUrl}/logout`, { method: 'POST' });
    expect(logout.status).toBe(303);
    const endSession = new URL(logout.headers.get('location')!);
    expect(endSession.origin).toBe(op.issuer);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${demoUrl}/signed-out`);
    expect(decodeJwt(endSession.searchParams.get('id_token_hint')!)).toMatchObject({ aud: CLIENT_ID, iss: op.issuer });
    expect(await signedIn(browser)).toBe(false);

    const { response: confirm, url } = await browser.follow(endSession.href);
    const { response: landed, url: landedAt } = await confirmOpLogout(browser, confirm, url);
    expect(landedAt).toBe(`${demoUrl}/signed-out`);
    expect(await landed.text()).toContain('You are signed out of the demo app and of Gatehouse');
    // The OP session ended too: signing in again asks for the password again.
    const { response: again } = await browser.follow(`${demoUrl}/login`);
    expect(await again.text()).toContain('name="password"');
  });

  describe('back-channel logout', () => {
    let demoToken: string;
    let otherAppToken: string;
    let claims: JWTPayload;

    beforeAll(async () => {
      const { browser } = await signIn();
      // The same OP session signs in to another app too, so the OP sends it a logout token of its own.
      const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
      await browser.follow(
        `${op.issuer}/auth?${new URLSearchParams({ client_id: 'other-app', response_type: 'code', scope: 'openid', redirect_uri: 'http://127.0.0.1:9/callback', code_challenge: challenge, code_challenge_method: 'S256', state: 's' })}`,
      ).catch(() => undefined);
      relay.deliveries.length = 0;
      // Signing out at the OP itself (not through the demo): the OP tells every app of its session.
      const { response, url } = await browser.follow(`${op.issuer}/session/end`);
      await confirmOpLogout(browser, response, url);
      expect(await signedIn(browser)).toBe(false);
      const demoDelivery = relay.deliveries.find((delivery) => delivery.path === '/demo')!;
      expect(demoDelivery.status).toBe(200);
      demoToken = demoDelivery.logoutToken;
      otherAppToken = relay.deliveries.find((delivery) => delivery.path === '/other')!.logoutToken;
      claims = decodeJwt(demoToken);
    });

    it('a logout token from the OP ends the demo session of that sid (answered 200)', () => {
      expect(decodeProtectedHeader(demoToken).typ).toBe('logout+jwt');
      expect(claims).toMatchObject({ iss: op.issuer, aud: CLIENT_ID, sid: expect.any(String), events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } });
    });

    it('ends only the sessions of that sid: another sign-in stays', async () => {
      const { browser: first } = await signIn();
      const { browser: second } = await signIn();
      const { response, url } = await first.follow(`${op.issuer}/session/end`);
      await confirmOpLogout(first, response, url);
      expect(await signedIn(first)).toBe(false);
      expect(await signedIn(second)).toBe(true);
    });

    /** A token as the OP would sign it (its key), with the claims of a real one and a fresh jti. */
    const asOp = (payload: JWTPayload, header: Record<string, unknown> = { typ: 'logout+jwt' }) =>
      op.signAsOp(header, { ...claims, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 120, jti: crypto.randomUUID(), ...payload });

    it('accepts a well-formed token signed with the OP key (the control for the refusals below)', async () => {
      const { browser } = await signIn();
      const me = await browser.request(`${demoUrl}/me`);
      const sid = /<th scope="row">sid<\/th><td><code>([^<]+)<\/code>/.exec(await me.text())![1]!;
      const response = await postLogoutToken(await asOp({ sid }));
      expect(response.status).toBe(200);
      expect(await signedIn(browser)).toBe(false);
    });

    // Threat: a captured logout token (from a log, a proxy) replayed to sign people out again and again.
    it('refuses a replayed logout token (jti seen before)', async () => {
      const response = await postLogoutToken(demoToken);
      expect(response.status).toBe(400);
      expect((await response.json()) as object).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('jti') });
    });

    // Threat: a logout token the OP addressed to another app, sent here to sign people out of the demo.
    it('refuses a real logout token addressed to another client (aud)', async () => {
      expect(decodeJwt(otherAppToken).aud).toBe('other-app');
      const response = await postLogoutToken(otherAppToken);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('"aud"');
    });

    // Threat: a forged token, the OP's claims signed by someone else's key under the OP's key id.
    it('refuses a token with a wrong signature', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const kid = decodeProtectedHeader(demoToken).kid!;
      const forged = await new SignJWT({ ...claims, jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256', kid, typ: 'logout+jwt' }).sign(privateKey);
      const response = await postLogoutToken(forged);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('signature verification failed');
      // And the real token with one character of its signature changed.
      const tampered = demoToken.slice(0, -2) + (demoToken.endsWith('A') ? 'BB' : 'AA');
      expect((await postLogoutToken(tampered)).status).toBe(400);
    });

    // Threat: "alg": "none" (RFC 8725 §2.1), an unsigned token taken as signed.
    it('refuses an unsigned token (alg none)', async () => {
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const unsigned = `${encode({ alg: 'none', typ: 'logout+jwt' })}.${encode({ ...claims, jti: crypto.randomUUID() })}.`;
      const response = await postLogoutToken(unsigned);
      expect(response.status).toBe(400);
    });

    // Threat: an ID token (which carries a nonce) passed off as a logout token.
    it('refuses a token with a nonce', async () => {
      const response = await postLogoutToken(await asOp({ nonce: 'n-0S6_WzA2Mj' }));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('nonce');
    });

    // Threat: another kind of JWT from the same OP (no logout event) taken as a logout instruction.
    it('refuses a token without the back-channel logout event', async () => {
      const response = await postLogoutToken(await asOp({ events: { 'http://schemas.openid.net/event/other': {} } }));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('events');
      const none = await postLogoutToken(await asOp({ events: undefined }));
      expect(none.status).toBe(400);
    });

    // Threat: a JWT of another type from the OP (an ID token: typ JWT) taken as a logout token.
    it('refuses a token not typed logout+jwt', async () => {
      const response = await postLogoutToken(await asOp({}, { typ: 'JWT' }));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error_description: string }).error_description).toContain('"typ"');
    });

    // Threat: a token that names nobody, or one from another issuer, or long expired.
    it('refuses a token without sid and sub, from another issuer, or expired', async () => {
      expect((await postLogoutToken(await asOp({ sid: undefined, sub: undefined }))).status).toBe(400);
      expect((await postLogoutToken(await asOp({ iss: 'http://localhost:1' }))).status).toBe(400);
      const past = Math.floor(Date.now() / 1000) - 3600;
      expect((await postLogoutToken(await asOp({ iat: past, exp: past + 120 }))).status).toBe(400);
    });

    it('refuses a request without a logout token', async () => {
      expect((await fetch(`${demoUrl}/backchannel-logout`, form({}))).status).toBe(400);
      const json = await fetch(`${demoUrl}/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ logout_token: demoToken }) });
      expect(json.status).toBe(400);
    });
  });

  it('signs in, out and is signed out by the OP as a public client (no secret, PKCE), as npm start registers it', async () => {
    const browser = new Browser();
    const { url } = await browser.follow(`${publicDemoUrl}/login`);
    const { response, url: landed } = await browser.follow(`${url}/login`, form({ login: 'alice@example.com', password: 'alice' }));
    expect(landed).toBe(`${publicDemoUrl}/me`);
    expect(await response.text()).toContain('<tr><th scope="row">aud</th><td><code>demo-public</code>');
    // Signing out at the OP reaches it over back-channel logout, straight from the OP.
    const { response: confirm, url: confirmUrl } = await browser.follow(`${op.issuer}/session/end`);
    await confirmOpLogout(browser, confirm, confirmUrl);
    expect((await browser.request(`${publicDemoUrl}/me`)).status).toBe(303);
  });

  it('keeps the whoami page on every other host (the hosts Gatehouse guards)', async () => {
    const response = await fetch(`${demoUrl.replace('127.0.0.1', 'localhost')}/login?format=json`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { url: string }).url).toBe('/login?format=json');
  });
});

