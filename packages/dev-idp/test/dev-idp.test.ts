import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDevIdp, type DevIdp } from '../src/index.js';

const CLIENT_ID = 'test-rp';
const CLIENT_SECRET = 'test-rp-secret';
const REDIRECT_URI = 'http://localhost:4999/callback';
const POST_LOGOUT_REDIRECT_URI = 'http://localhost:4999/signed-out';
const COOKIE_PREFIX = 'testidp';
const CONTROL_TOKEN = 'test-control-token';

/** A browser stand-in: remembers cookies, follows nothing on its own, and records every cookie name set. */
class Browser {
  readonly cookies = new Map<string, string>();
  readonly cookieNamesSeen = new Set<string>();

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      this.cookieNamesSeen.add(name);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  postForm(url: string, form: Record<string, string>): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  }
}

function location(response: Response, base: string): URL {
  expect([302, 303]).toContain(response.status);
  return new URL(response.headers.get('location')!, base);
}

function decodeJwt(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

let idp: DevIdp;
let backchannel: Server;
const logoutTokens: string[] = [];

beforeAll(async () => {
  // The relying party's back-channel logout endpoint, on loopback like Gatehouse in development.
  backchannel = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      logoutTokens.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => backchannel.listen(0, '127.0.0.1', resolve));
  const backchannelPort = (backchannel.address() as AddressInfo).port;

  idp = await startDevIdp({
    port: 0,
    cookiePrefix: COOKIE_PREFIX,
    controlToken: CONTROL_TOKEN,
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [REDIRECT_URI],
        postLogoutRedirectUris: [POST_LOGOUT_REDIRECT_URI],
        backchannelLogoutUri: `http://127.0.0.1:${backchannelPort}/backchannel-logout`,
      },
    ],
  });
});

afterAll(async () => {
  await idp?.close();
  await new Promise((resolve) => backchannel?.close(resolve));
});

interface Authorization {
  browser: Browser;
  verifier: string;
  state: string;
  nonce: string;
  /** The interaction (login page) URL the IdP sent the browser to. */
  interaction: URL;
}

async function authorize(extra: Record<string, string> = {}, browser = new Browser()): Promise<Authorization> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const url = new URL('/auth', idp.issuer);
  url.search = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid email profile groups offline_access',
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  const interaction = location(await browser.request(url.href), idp.issuer);
  expect(interaction.pathname).toMatch(/^\/interaction\/[\w-]+$/);
  return { browser, verifier, state, nonce, interaction };
}

/**
 * Submits a form of the IdP, then does what a browser would: follows redirects and submits the IdP's
 * self-submitting forms (oidc-provider's form_post pages), until the browser leaves the IdP.
 */
async function submit(browser: Browser, url: string, form: Record<string, string>): Promise<URL> {
  let response = await browser.postForm(url, form);
  let base = url;
  for (;;) {
    if (response.status === 200) {
      const autoForm = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(await response.text());
      expect(autoForm).not.toBeNull();
      const fields = [...autoForm![2]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map(([, name, value]) => [name!, value!]);
      base = new URL(autoForm![1]!, base).href;
      response = await browser.postForm(base, Object.fromEntries(fields));
      continue;
    }
    const next = location(response, base);
    if (next.origin !== new URL(idp.issuer).origin) return next;
    base = next.href;
    response = await browser.request(base);
  }
}

async function signIn(extra: Record<string, string> = {}) {
  const authorization = await authorize(extra);
  const callback = await submit(authorization.browser, `${authorization.interaction.href}/login`, {
    login: 'alice@example.com',
    password: 'alice',
  });
  return { ...authorization, callback };
}

async function token(form: Record<string, string>) {
  const response = await fetch(new URL('/token', idp.issuer), {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id_token: string; access_token: string; refresh_token?: string; scope: string };
}

function exchange(code: string, verifier: string) {
  return token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
}

describe('dev-idp', () => {
  it('advertises PKCE S256, RFC 9207 iss, PAR and both logouts in discovery', async () => {
    const response = await fetch(new URL('/.well-known/openid-configuration', idp.issuer));
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(idp.issuer);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.end_session_endpoint).toBe(`${idp.issuer}/session/end`);
    expect(metadata.backchannel_logout_supported).toBe(true);
    expect(metadata.pushed_authorization_request_endpoint).toBe(`${idp.issuer}/request`);
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile', 'groups', 'offline_access']));
  });

  it('signs in with the authorization code flow and PKCE, without a consent screen', async () => {
    const { browser, verifier, state, nonce, interaction } = await authorize();

    const form = await browser.request(interaction.href);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<title>Sign in · Development IdP</title>');
    expect(html).toMatch(/<label for="login">Email<\/label>\s*<input id="login" name="login" type="email"/);
    expect(html).toMatch(/<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/);
    expect(html).toContain('>Sign in</button>');
    expect(html).toContain('>Cancel</button>');

    const wrong = await browser.postForm(`${interaction.href}/login`, { login: 'alice@example.com', password: 'nope' });
    expect(wrong.status).toBe(200);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toContain('Invalid email or password');
    expect(wrongHtml).toContain('value="alice@example.com"');

    const injected = await browser.postForm(`${interaction.href}/login`, { login: '"><script>alert(1)</script>', password: 'x' });
    const injectedHtml = await injected.text();
    expect(injectedHtml).not.toContain('<script>alert(1)</script>');
    expect(injectedHtml).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');

    const callback = await submit(browser, `${interaction.href}/login`, { login: 'alice@example.com', password: 'alice' });
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(idp.issuer);
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();

    const tokens = await exchange(code!, verifier);
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    const claims = decodeJwt(tokens.id_token);
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: CLIENT_ID,
      nonce,
      email: 'alice@example.com',
      email_verified: true,
      name: 'Alice Example',
      groups: ['staff', 'admins'],
    });
    expect(claims.sid).toEqual(expect.any(String));

    expect(browser.cookieNamesSeen.size).toBeGreaterThan(0);
    for (const name of browser.cookieNamesSeen) expect(name.startsWith(`${COOKIE_PREFIX}_`)).toBe(true);
  });

  it('shows the login form again for prompt=select_account, to switch to another account', async () => {
    const { browser } = await signIn();
    const { verifier, interaction } = await authorize({ prompt: 'select_account' }, browser);
    const form = await browser.request(interaction.href);
    expect(await form.text()).toContain('name="password"');
    const callback = await submit(browser, `${interaction.href}/login`, { login: 'bob@example.com', password: 'bob' });
    const tokens = await exchange(callback.searchParams.get('code')!, verifier);
    expect(decodeJwt(tokens.id_token)).toMatchObject({ email: 'bob@example.com', groups: ['staff'] });
  });

  it('answers Cancel with error=access_denied', async () => {
    const { browser, state, interaction } = await authorize();
    const callback = await submit(browser, `${interaction.href}/abort`, {});
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(idp.issuer);
  });

  it('answers prompt=consent without a screen, keeping offline_access, and refresh carries new groups', async () => {
    const { callback, verifier } = await signIn({ prompt: 'consent' });
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    const tokens = await exchange(callback.searchParams.get('code')!, verifier);
    expect(tokens.scope.split(' ')).toContain('offline_access');
    expect(tokens.refresh_token).toBeTruthy();

    idp.setUserGroups('alice@example.com', ['staff']);
    try {
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
      expect(decodeJwt(refreshed.id_token).groups).toEqual(['staff']);
      const userinfo = await fetch(new URL('/me', idp.issuer), {
        headers: { authorization: `Bearer ${refreshed.access_token}` },
      });
      expect(await userinfo.json()).toMatchObject({ email: 'alice@example.com', groups: ['staff'] });
    } finally {
      idp.setUserGroups('alice@example.com', ['staff', 'admins']);
    }
  });

  it('changes groups through the control API only with the control token', async () => {
    const url = new URL('/__control/users/bob%40example.com/groups', idp.issuer);
    const body = JSON.stringify({ groups: ['staff', 'auditors'] });
    const denied = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(denied.status).toBe(401);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CONTROL_TOKEN}` };
    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(204);
    const unknown = new URL('/__control/users/nobody%40example.com/groups', idp.issuer);
    expect((await fetch(unknown, { method: 'POST', headers, body })).status).toBe(404);
    idp.setUserGroups('bob@example.com', ['staff']);
  });

  it('changes what a person says of their email (a self-service profile), and every later answer carries it', async () => {
    const { callback, verifier } = await signIn({ prompt: 'consent' });
    const tokens = await exchange(callback.searchParams.get('code')!, verifier);
    const url = new URL('/__control/users/alice%40example.com/email', idp.issuer);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CONTROL_TOKEN}` };
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await fetch(url, { method: 'POST', headers, body: JSON.stringify({ email: 'x@example.com' }) })).status).toBe(400);
    expect((await fetch(url, { method: 'POST', headers, body: JSON.stringify({ email: 'boss@example.com', emailVerified: false }) })).status).toBe(204);
    try {
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
      expect(decodeJwt(refreshed.id_token)).toMatchObject({ email: 'boss@example.com', email_verified: false });
    } finally {
      await fetch(url, { method: 'POST', headers, body: JSON.stringify({ email: 'alice@example.com', emailVerified: true }) });
    }
  });

  it('logs out without a confirmation stop and sends a back-channel logout token with sid', async () => {
    const { browser, callback, verifier } = await signIn();
    const tokens = await exchange(callback.searchParams.get('code')!, verifier);
    const sid = decodeJwt(tokens.id_token).sid;

    const endSession = new URL('/session/end', idp.issuer);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.id_token,
      post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
      state: 'bye',
    }).toString();
    const page = await browser.request(endSession.href);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('document.getElementById(\'continue\').click()');
    const action = /<form id="op.logoutForm" method="post" action="([^"]+)">/.exec(html)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;

    logoutTokens.length = 0;
    const done = await submit(browser, action, { xsrf, logout: 'yes' });
    expect(done.href).toBe(`${POST_LOGOUT_REDIRECT_URI}?state=bye`);
    expect(logoutTokens).toHaveLength(1);
    expect(decodeJwt(logoutTokens[0]!)).toMatchObject({ iss: idp.issuer, aud: CLIENT_ID, sid });

    // The refresh token was bound to the ended session or grant: it no longer works.
    const refresh = await fetch(new URL('/token', idp.issuer), {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
    });
    expect(refresh.status).toBe(400);
  });
});

describe('dev-idp with a data directory', () => {
  it('keeps its signing keys across restarts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dev-idp-test-'));
    const kids = async () => {
      const started = await startDevIdp({ port: 0, clients: [], dataDir });
      try {
        const jwks = (await (await fetch(new URL('/jwks', started.issuer))).json()) as { keys: { kid: string }[] };
        return jwks.keys.map((key) => key.kid);
      } finally {
        await started.close();
      }
    };
    try {
      const first = await kids();
      expect(first).toHaveLength(2);
      expect(await kids()).toEqual(first);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
