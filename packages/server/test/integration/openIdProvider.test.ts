import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, inputValue, ScriptedBrowser, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { authorizationUrl, authorize, discover, followAuthorization, oidcApp, redeem, RP, startBackchannelEndpoint, type BackchannelEndpoint } from './support/relyingParty.js';
import { secretPlaceholder } from '../../src/provide/clients.js';
import { derivedKey } from '../../src/provide/configuration.js';

/**
 * Gatehouse as the OpenID Provider of an app, end to end, on its database storage: an openid-client v6 relying party discovers
 * Gatehouse, a person signs in through Gatehouse and the real development IdP, the app exchanges the
 * code (PKCE), reads userinfo and refreshes; the app's policy decides at each step.
 */
const SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const NEXT_SECRET = 'grafana-next-secret-0123456789abcdefghijklmnopqrstuv';
const SIGNED_OUT = 'http://127.0.0.1:9/signed-out';

let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;
/** The app's back-channel logout endpoint: a real listener that keeps the logout tokens it is sent. */
let backchannel: BackchannelEndpoint;

beforeAll(async () => {
  backchannel = await startBackchannelEndpoint();
  const port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  gatehouse = await startGatehouse({
    port,
    metrics: { listen: { host: '127.0.0.1', port: 0 } },
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
    ],
    apps: [
      oidcApp('grafana', 'Grafana', `http://grafana.localhost:${port}`, {
        secrets: [SECRET, NEXT_SECRET],
        postLogoutRedirectUris: [SIGNED_OUT],
        backchannelLogoutUri: backchannel.uri,
        scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
      }),
      oidcApp('wiki', 'Wiki', `http://wiki.localhost:${port}`, { secrets: [SECRET], subject: 'pairwise', idTokenAlgorithm: 'ES256', claimsInIdToken: false }),
      oidcApp('reports', 'Reports', `http://reports.localhost:${port}`, { authentication: 'none' }, { allow: [{ groups: ['admins'] }] }),
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
  await backchannel?.close();
});

describe('Gatehouse as the OpenID Provider', () => {
  it('signs a person in through Gatehouse and the IdP: code with PKCE, userinfo, refresh', async () => {
    const config = await discover(portal, 'grafana', SECRET);
    expect(config.serverMetadata().issuer).toBe(portal);
    expect(config.serverMetadata().token_endpoint).toBe(`${portal}/oidc/token`);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(portal);
    expect(claims.aud).toBe('grafana');
    expect(claims.email).toBe('bob@example.com');
    expect(claims.groups).toEqual(['staff']);
    expect(typeof claims.auth_time).toBe('number');
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info.email).toBe('bob@example.com');
    expect(info.email_verified).toBe(true);
    expect(tokens.refresh_token).toBeDefined();
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    // Rotation: the old refresh token is spent.
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    // The grant is recorded with the Gatehouse session it was made in, the client's sid and sub.
    const current = await gatehouse.services.resolver.portal(browser.cookie('localhost', gatehouse.services.cookies.session), { headers: {}, log: gatehouse.app.log });
    const [grant] = await gatehouse.services.opStore.liveGrantsOfSessions([current!.session.id]);
    expect(grant).toMatchObject({ clientId: 'grafana', appId: 'grafana', userId: current!.user.id, sessionId: current!.session.id, subject: claims.sub });
    // The sid a logout token will carry (in the ID token only for clients with a back-channel logout URI).
    expect(grant!.sid).toMatch(/^[\w-]{20,}$/);
    expect(grant!.scopes).toEqual(expect.arrayContaining(['openid', 'email', 'groups']));

    // Signed in already: straight back to the app, no IdP in between.
    const second = await authorize(config, browser);
    expect(second.back.searchParams.get('code')).toBeTruthy();
  });

  it('gives a pairwise client a subject of its own, signs with its algorithm and keeps claims to userinfo when asked', async () => {
    // Threat: two clients linking one person's activity through a shared identifier.
    const grafana = await discover(portal, 'grafana', SECRET);
    const wiki = await discover(portal, 'wiki', SECRET);
    const browser = new ScriptedBrowser();
    const signIn = async (config: client.Configuration, login?: string) => redeem(config, await authorize(config, browser, { login, extra: { scope: 'openid email' } }));
    const publicSub = (await signIn(grafana, 'bob@example.com')).claims()!.sub;
    const tokens = await signIn(wiki);
    const claims = tokens.claims()!;
    expect(claims.sub).not.toBe(publicSub);
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256');
    expect(claims.email).toBeUndefined();
    const info = await client.fetchUserInfo(wiki, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, email: 'bob@example.com' });
    // The same person, the same pairwise subject next time.
    expect((await signIn(wiki)).claims()!.sub).toBe(claims.sub);
  });

  it('answers prompt=none without a Gatehouse session with login_required, to the redirect URI', async () => {
    // Threat: a silent authorization that shows a page (or signs someone in) instead of telling the app.
    const config = await discover(portal, 'grafana', SECRET);
    const started = await authorizationUrl(config, { prompt: 'none' });
    const { back } = await followAuthorization(new ScriptedBrowser(), started.url);
    expect(back?.searchParams.get('error')).toBe('login_required');
    expect(back?.searchParams.get('state')).toBe(started.state);
  });

  it('refuses a person the policy does not admit: the 403 page naming the app, or access_denied with prompt=none', async () => {
    // Threat: an app's policy bypassed by its OpenID Connect door (Keycloak #8783).
    const config = await discover(portal, 'reports');
    const browser = new ScriptedBrowser();
    const started = await authorizationUrl(config, { scope: 'openid email' });
    const { back, hop } = await followAuthorization(browser, started.url, 'bob@example.com');
    expect(back).toBeUndefined();
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('Reports');
    expect(hop.body).toContain('oidc_access_denied');

    const silent = await authorizationUrl(config, { scope: 'openid email', prompt: 'none' });
    const denied = await followAuthorization(browser, silent.url);
    expect(denied.back?.searchParams.get('error')).toBe('access_denied');
    // Recorded once for the app and step, however often the app asks again within the minute.
    await followAuthorization(browser, (await authorizationUrl(config, { scope: 'openid email', prompt: 'none' })).url);
    const { events } = await gatehouse.services.audit.query({ type: 'access_denied', appId: 'reports' }, 1, 50);
    expect(events).toHaveLength(1);
    expect(events[0]!.details).toMatchObject({ app: { id: 'reports', name: 'Reports' }, oidc: 'authorization' });
  });

  it('accepts either of two live secrets and refuses a wrong one with invalid_client', async () => {
    // Threat: a guessed or stale client secret redeeming a code.
    const wrong = await discover(portal, 'grafana', 'not-the-secret-0123456789abcdefghijklmnopqrstuv');
    await expect(client.refreshTokenGrant(wrong, 'x')).rejects.toMatchObject({ status: 401, cause: [{ parameters: { error: 'invalid_client' } }] });
    const next = await discover(portal, 'grafana', NEXT_SECRET);
    // The next secret authenticates: the refusal is about the token, not the client.
    await expect(client.refreshTokenGrant(next, 'x')).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a refresh, and userinfo, once the policy no longer admits the person', async () => {
    // Threat: a person removed from a group keeps getting tokens (node-oidc-provider #392).
    const config = await discover(portal, 'grafana', SECRET);
    const tokens = await redeem(config, await authorize(config, new ScriptedBrowser(), { login: 'bob@example.com' }));
    const apps = gatehouse.services.apps;
    // The file's apps as they were put in force (with their client secrets: the registry keeps only digests).
    const before = gatehouse.services.running.current.apps;
    apps.setConfigApps(before.map((app) => (app.id === 'grafana' ? { ...app, policy: { allow: [{ groups: ['admins'] }], deny: [] } } : app)));
    try {
      await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).rejects.toMatchObject({ status: 401 });
    } finally {
      apps.setConfigApps(before);
    }
  });

  it('refuses a refresh for a person suspended meanwhile', async () => {
    // Threat: a suspended person's app sessions living on through refresh tokens.
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
    const userId = tokens.claims()!.sub;
    await gatehouse.services.accounts.setStatus(userId, 'suspended');
    // The status alone, its sessions not ended (the console ends them too): the person is judged again
    // once the session caches hear of the change, as every change to a person tells them.
    const sessionIds = (await gatehouse.services.sessions.listActiveForUser(userId)).map((session) => session.id);
    gatehouse.services.changes.publish({ type: 'sessions-changed', sessionIds });
    try {
      await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      await gatehouse.services.accounts.setStatus(userId, 'active');
    }
  });

  it('allows CORS on the token endpoint only from the origins of the client’s redirect URIs', async () => {
    // Threat: another site's scripts reading token answers of a single-page client.
    const preflight = (origin: string) =>
      new ScriptedBrowser().request(`${portal}/oidc/token`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect((await preflight('http://127.0.0.1:9')).headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
    const token = (origin: string) => new ScriptedBrowser().request(`${portal}/oidc/token`, { form: { grant_type: 'authorization_code', code: 'x', client_id: 'reports', redirect_uri: RP, code_verifier: 'x'.repeat(43) }, headers: { origin } });
    expect((await token('http://127.0.0.1:9')).headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
    expect((await token('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a refresh once the Gatehouse session the grant was made in has ended', async () => {
    // Threat: tokens outliving the sign-in they came from (a revoked or signed-out session).
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'alice@example.com' }));
    const current = await gatehouse.services.resolver.portal(browser.cookie('localhost', gatehouse.services.cookies.session), { headers: {}, log: gatehouse.app.log });
    await gatehouse.services.sessions.revoke(current!.session.id, 'revoked-by-admin');
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a replayed code and revokes what the first exchange issued', async () => {
    // Threat: an intercepted authorization code redeemed a second time (RFC 6749 §4.1.2).
    const config = await discover(portal, 'grafana', SECRET);
    const authorized = await authorize(config, new ScriptedBrowser(), { login: 'bob@example.com' });
    const tokens = await redeem(config, authorized);
    await expect(redeem(config, authorized)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).rejects.toMatchObject({ status: 401 });
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it.each([
    ['a prefix of the registered URI', `${RP}x`],
    ['dot segments', 'http://127.0.0.1:9/x/../callback'],
    ['another case', 'http://127.0.0.1:9/Callback'],
    ['an added query', `${RP}?next=1`],
  ])('refuses a redirect URI with %s with a page, never a redirect there', async (_what, redirectUri) => {
    // Threat: a code sent to an address the app did not register (open redirect, code theft).
    const config = await discover(portal, 'grafana', SECRET);
    const started = await authorizationUrl(config, { redirect_uri: redirectUri });
    const hop = await new ScriptedBrowser().request(started.url.href, { headers: { accept: 'text/html' } });
    expect(hop.status).toBe(400);
    expect(hop.headers.get('location')).toBeNull();
    expect(hop.body).toContain('oidc_request_invalid');
    expect(hop.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('answers every OpenID Provider address with the security headers of its own answers', async () => {
    // Threat: an OP answer framed by another site, sniffed as another type, or leaking its address in a
    // Referer (helmet does not run on these routes: the OP's answers set these headers themselves).
    const answers = [
      await new ScriptedBrowser().request(`${portal}/.well-known/openid-configuration`),
      await new ScriptedBrowser().request(`${portal}/oidc/jwks`),
      await new ScriptedBrowser().request(`${portal}/oidc/token`, { form: { grant_type: 'authorization_code', code: 'x', client_id: 'grafana', client_secret: 'wrong' } }),
      await new ScriptedBrowser().request(`${portal}/oidc/auth?client_id=nobody`, { headers: { accept: 'text/html' } }),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('content-security-policy'), answer.url).toContain("default-src 'none'");
      expect(answer.headers.get('content-security-policy'), answer.url).toContain("frame-ancestors 'none'");
      expect(answer.headers.get('x-frame-options'), answer.url).toBe('DENY');
      expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), answer.url).toBe('no-referrer');
      expect(answer.headers.get('cross-origin-opener-policy'), answer.url).toBe('same-origin');
      // A plain-http portal (loopback) sends no HSTS; on https the OP's answers do (provide/mount.test.ts).
      expect(answer.headers.get('strict-transport-security'), answer.url).toBeNull();
    }
  });

  it('answers response_mode=form_post with a form whose page may run its one submitting script and nothing else', async () => {
    // Threat: a script on the page that carries the code (a value the app sent reflected into it, or
    // any script of the portal's origin) reading the code: the page's policy lets exactly its own
    // submitting script run, by its hash; no 'unsafe-inline', no 'self'.
    const config = await discover(portal, 'grafana', SECRET);
    expect(config.serverMetadata().response_modes_supported).toContain('form_post');
    const browser = new ScriptedBrowser();
    const started = await authorizationUrl(config, { scope: 'openid email', response_mode: 'form_post' });
    const { back, hop } = await followAuthorization(browser, started.url, 'bob@example.com');
    // No redirect to the app: the page posts there.
    expect(back).toBeUndefined();
    expect(hop.status).toBe(200);
    expect(new URL(hop.url).origin).toBe(portal);
    expect(hop.headers.get('content-type')).toMatch(/^text\/html/);
    expect(hop.headers.get('cache-control')).toContain('no-store');
    const policyOf = (page: Hop) =>
      Object.fromEntries(
        page.headers
          .get('content-security-policy')!
          .split(';')
          .map((directive) => directive.trim().split(/\s+/))
          .map(([name, ...values]) => [name!, values]),
      );
    const scriptsOf = (page: Hop) => [...page.body.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => match[1]!);
    const scripts = scriptsOf(hop);
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toContain('submit()');
    const policy = policyOf(hop);
    expect(policy['script-src']).toEqual([`'sha256-${createHash('sha256').update(scripts[0]!).digest('base64')}'`]);
    expect(policy['default-src']).toEqual(["'none'"]);
    expect(policy['frame-ancestors']).toEqual(["'none'"]);
    expect(policy['base-uri']).toEqual(["'none'"]);
    expect(hop.headers.get('x-frame-options')).toBe('DENY');
    // The form: to the registered redirect URI, with the code, the state and the issuer, which the app redeems.
    expect(formAction(hop.body)).toBe(RP);
    expect(inputValue(hop.body, 'state')).toBe(started.state);
    const posted = new URLSearchParams({ code: inputValue(hop.body, 'code')!, state: inputValue(hop.body, 'state')!, iss: inputValue(hop.body, 'iss')! });
    const callback = new Request(RP, { method: 'POST', body: posted, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state });
    expect(tokens.claims()!.email).toBe('bob@example.com');

    // A state that is markup: written as text, and still the one script may run.
    const hostile = await authorizationUrl(config, { scope: 'openid', response_mode: 'form_post', state: '"><script>parent.stolen=document.forms[0].code.value</script>' });
    const page = (await followAuthorization(browser, hostile.url)).hop;
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('<script>parent.stolen');
    expect(scriptsOf(page)).toEqual(scripts);
    expect(policyOf(page)['script-src']).toEqual(policy['script-src']);
  });

  it('refuses a public client without PKCE', async () => {
    // Threat: a code intercepted on its way to a public client, redeemed without the verifier.
    const config = await discover(portal, 'reports');
    const url = client.buildAuthorizationUrl(config, { redirect_uri: RP, scope: 'openid', state: 's' });
    const { back } = await followAuthorization(new ScriptedBrowser(), url);
    expect(back?.searchParams.get('error')).toBe('invalid_request');
    expect(back?.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('refuses a refresh that asks for more scopes than were granted', async () => {
    // Threat: a client widening what a person agreed to at a refresh.
    const config = await discover(portal, 'grafana', SECRET);
    const tokens = await redeem(config, await authorize(config, new ScriptedBrowser(), { login: 'bob@example.com', extra: { scope: 'openid email offline_access' } }));
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid email groups' })).rejects.toMatchObject({ error: 'invalid_scope' });
  });

  it('signs ID tokens with keys of their own: never the assertion keys, published at /oidc/jwks only', async () => {
    // Threat: an ID token passed to an app as its Gatehouse assertion, or the reverse.
    const config = await discover(portal, 'grafana', SECRET);
    const tokens = await redeem(config, await authorize(config, new ScriptedBrowser(), { login: 'bob@example.com' }));
    const assertionKeys = createLocalJWKSet(JSON.parse((await new ScriptedBrowser().request(`${portal}/.gatehouse/jwks.json`)).body) as JSONWebKeySet);
    await expect(jwtVerify(tokens.id_token!, assertionKeys)).rejects.toThrow();
    const opKeys = JSON.parse((await new ScriptedBrowser().request(`${portal}/oidc/jwks`)).body) as JSONWebKeySet;
    expect(opKeys.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    const assertionKids = new Set((JSON.parse((await new ScriptedBrowser().request(`${portal}/.gatehouse/jwks.json`)).body) as JSONWebKeySet).keys.map((key) => key.kid));
    for (const key of opKeys.keys) expect(assertionKids.has(key.kid)).toBe(false);
    // An app's assertion does not verify with the ID token keys either.
    const assertion = gatehouse.services.assertions.assertion({}, { userId: 'u', email: 'bob@example.com', name: 'Bob', groups: [] }, 'http://grafana.localhost');
    await expect(jwtVerify(assertion, createLocalJWKSet(opKeys))).rejects.toThrow();
  });

  it('answers the server-to-server endpoints on an internal host name, with URLs on the issuer', async () => {
    // Threat: discovery on another Host naming that host as the token endpoint (apps in containers call internal names).
    const hop = await new ScriptedBrowser(['gatehouse.internal']).request(`http://gatehouse.internal:${gatehouse.port}/.well-known/openid-configuration`);
    expect(hop.status).toBe(200);
    expect(JSON.parse(hop.body).token_endpoint).toBe(`${portal}/oidc/token`);
    // The authorization endpoint, which a browser reaches and which sets cookies, stays on the portal's name.
    const authorizeThere = await new ScriptedBrowser(['gatehouse.internal']).request(`http://gatehouse.internal:${gatehouse.port}/oidc/authorize?client_id=grafana`);
    expect(authorizeThere.status).toBe(421);
  });

  it('sends no secret in any of its answers', async () => {
    // Threat: a client secret, the value standing in for it, or a private key leaving in an answer.
    const placeholder = secretPlaceholder(derivedKey(gatehouse.services.secrets.cookieKey, 'client-secret-placeholder'), 'grafana');
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
    const answers: string[] = [];
    answers.push(JSON.stringify(tokens));
    for (const path of ['/.well-known/openid-configuration', '/oidc/jwks']) answers.push((await browser.request(`${portal}${path}`)).body);
    const basic = `Basic ${Buffer.from(`grafana:${SECRET}`).toString('base64')}`;
    const introspected = await browser.request(`${portal}/oidc/introspect`, { form: { token: tokens.access_token }, headers: { authorization: basic } });
    expect(JSON.parse(introspected.body).active).toBe(true);
    answers.push(introspected.body);
    const wrong = await browser.request(`${portal}/oidc/token`, { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'grafana', client_secret: NEXT_SECRET.slice(1) } });
    answers.push(wrong.body, JSON.stringify([...wrong.headers]));
    for (const answer of answers) {
      for (const secret of [SECRET, NEXT_SECRET, NEXT_SECRET.slice(1), placeholder]) expect(answer).not.toContain(secret);
    }
    // Only public halves are published.
    for (const key of (JSON.parse(answers[2]!) as JSONWebKeySet).keys) for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(member);
  });

  it.each([
    ['prompt=login', { prompt: 'login' }],
    ['max_age=1', { max_age: '1' }],
  ])('sends the person through the IdP again for %s, and says when they signed in', async (_what, extra) => {
    // Threat: an app that asks for a fresh authentication (before a sensitive action) handed an old one.
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const before = (await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }))).claims()!;
    // Two seconds pass, so that the sign-in above is older than max_age (whole seconds: oidc-provider
    // compares its second with now's) and than the step below.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const started = await authorizationUrl(config, extra);
    const hop = await browser.request(started.url.href, { headers: { accept: 'text/html' } });
    const { stoppedAt } = await browser.follow(hop, (url) => url.pathname === '/sign-in' || url.origin === new URL(RP).origin);
    expect(stoppedAt?.pathname).toBe('/sign-in');
    // The next sign-in asks the IdP to let the person choose (the "Switch account" sign-in).
    expect(browser.cookie('localhost', gatehouse.services.cookies.chooseAccount)).toBe('1');
    const { back } = await followAuthorization(browser, started.url, 'bob@example.com');
    const after = (await redeem(config, { ...started, back: back! })).claims()!;
    expect(after.auth_time!).toBeGreaterThan(before.auth_time!);
  });

  it('ends the Gatehouse session and the IdP’s on RP-initiated logout, then returns to the registered URI with the state', async () => {
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
    const cookie = browser.cookie('localhost', gatehouse.services.cookies.session);
    const resolve = () => gatehouse.services.resolver.portal(cookie, { headers: {}, log: gatehouse.app.log });
    expect(await resolve()).toBeDefined();

    // Threat: a logout that sends the person to an address the app did not register (open redirect).
    const unregistered = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:9/elsewhere', state: 'st' });
    const refused = await browser.request(unregistered.href, { headers: { accept: 'text/html' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('oidc_request_invalid');
    expect(await resolve()).toBeDefined();

    const url = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'st' });
    const question = await browser.request(url.href, { headers: { accept: 'text/html' } });
    expect(question.status).toBe(200);
    expect(question.body).toContain('Sign out of Gatehouse?');
    expect(question.body).toContain('Grafana');
    const confirmed = await browser.request(new URL(formAction(question.body)!, portal).href, { form: { xsrf: inputValue(question.body, 'xsrf')!, logout: 'yes' }, headers: { origin: portal } });
    // On to the IdP's end-session endpoint, as Gatehouse's own sign-out, with its id_token_hint and a state of its own.
    expect(confirmed.status).toBe(303);
    const atIdp = new URL(confirmed.headers.get('location')!);
    expect(atIdp.origin).toBe(new URL(idp.issuer).origin);
    expect(atIdp.searchParams.get('post_logout_redirect_uri')).toBe(`${portal}/signed-out`);
    expect(atIdp.searchParams.get('id_token_hint')).toBeTruthy();
    expect(atIdp.searchParams.get('state')).not.toBe('st');
    expect(await resolve()).toBeUndefined();
    // What travels with the browser to the IdP and back: the app's state is not in any URL until the end.
    const continuation = browser.cookie('localhost', gatehouse.services.cookies.logoutContinuation);
    const signOutState = browser.cookie('localhost', gatehouse.services.cookies.signOutState);
    expect(continuation).toBeTruthy();
    expect(signOutState).toBe(atIdp.searchParams.get('state'));

    // The IdP's logout page (its script submits the form), then back to Gatehouse and on to the app.
    const idpPage = await browser.request(atIdp.href, { headers: { accept: 'text/html' } });
    const idpDone = await browser.request(new URL(formAction(idpPage.body)!, idpPage.url).href, { form: { xsrf: inputValue(idpPage.body, 'xsrf') ?? '', logout: 'yes' } });
    const { stoppedAt } = await browser.follow(idpDone, (next) => next.origin === new URL(SIGNED_OUT).origin);
    expect(stoppedAt?.href).toBe(`${SIGNED_OUT}?state=st`);
    expect(browser.cookie('localhost', gatehouse.services.cookies.logoutContinuation)).toBeUndefined();

    // Threat: a continuation replayed (a copied cookie, the URL of the IdP's return opened again): it
    // is redeemed once, and the signed-out page is shown instead.
    const again = await fetch(`${portal}/signed-out?state=${encodeURIComponent(signOutState!)}`, {
      redirect: 'manual',
      headers: { cookie: `${gatehouse.services.cookies.signOutState}=${signOutState}; ${gatehouse.services.cookies.logoutContinuation}=${continuation}` },
    });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/signed-out');

    // The app's back-channel endpoint is told, once, with the sid of its ID token, signed with the ID token keys.
    const sid = tokens.claims()!.sid;
    expect(sid).toBeDefined();
    const keys = createLocalJWKSet(JSON.parse((await browser.request(`${portal}/oidc/jwks`)).body) as JSONWebKeySet);
    const told = async () => {
      const found = [];
      for (const token of backchannel.tokens) {
        const { payload } = await jwtVerify(token, keys, { issuer: portal, audience: 'grafana', typ: 'logout+jwt' });
        if (payload.sid === sid) found.push(payload);
      }
      return found;
    };
    await expect.poll(async () => (await told()).length, { timeout: 10_000 }).toBe(1);
    expect((await told())[0]).toMatchObject({ sub: tokens.claims()!.sub, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    // The IdP's session is gone too: a new authorization in the same browser asks for the IdP's login form again.
    const next = await authorizationUrl(config);
    const { stoppedAt: atSignIn } = await browser.follow(await browser.request(next.url.href, { headers: { accept: 'text/html' } }), (to) => to.pathname === '/sign-in' || to.origin === new URL(RP).origin);
    expect(atSignIn?.pathname).toBe('/sign-in');
    const rd = atSignIn!.searchParams.get('rd')!;
    const { hop: atIdp2 } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`));
    expect(new URL(atIdp2.url).origin).toBe(new URL(idp.issuer).origin);
    expect(atIdp2.body).toContain('name="login"');
    expect(atIdp2.body).toContain('name="password"');
  });

  it('keeps the way back to the app in the browser that signed out', async () => {
    // Threat: a continuation carried to another browser (one without this sign-out's state cookie, or
    // with another sign-out's): it sends nobody to the app, which only the signed-out page replaces.
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
    const question = await browser.request(client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'st' }).href, { headers: { accept: 'text/html' } });
    const confirmed = await browser.request(new URL(formAction(question.body)!, portal).href, { form: { xsrf: inputValue(question.body, 'xsrf')!, logout: 'yes' }, headers: { origin: portal } });
    const idpState = new URL(confirmed.headers.get('location')!).searchParams.get('state')!;
    const continuation = browser.cookie('localhost', gatehouse.services.cookies.logoutContinuation)!;
    const names = gatehouse.services.cookies;
    const signedOut = (cookie: string) => fetch(`${portal}/signed-out?state=${encodeURIComponent(idpState)}`, { redirect: 'manual', headers: { cookie } });
    // Only the continuation, without the state cookie of the browser that signed out.
    expect((await signedOut(`${names.logoutContinuation}=${continuation}`)).headers.get('location')).toBe('/signed-out');
    // With a state cookie of another sign-out, and that sign-out's state sent back.
    const other = await fetch(`${portal}/signed-out?state=other`, { redirect: 'manual', headers: { cookie: `${names.signOutState}=other; ${names.logoutContinuation}=${continuation}` } });
    expect(other.headers.get('location')).toBe('/signed-out');
    // The browser that signed out still goes back to the app (the refusals consumed nothing).
    expect((await signedOut(`${names.signOutState}=${idpState}; ${names.logoutContinuation}=${continuation}`)).headers.get('location')).toBe(`${SIGNED_OUT}?state=st`);
  });

  it('publishes the next ID token key before it signs, then signs with it', async () => {
    // Threat: ID tokens signed by a key the apps' cached key sets do not hold yet (refused sign-ins after a rotation).
    const config = await discover(portal, 'grafana', SECRET);
    const browser = new ScriptedBrowser();
    const idTokenKid = async () => {
      const tokens = await redeem(config, await authorize(config, browser, { login: 'bob@example.com' }));
      return decodeProtectedHeader(tokens.id_token!).kid;
    };
    const before = await idTokenKid();
    const rs256 = gatehouse.services.idTokenKeys.find((keys) => keys.purpose === 'id-token-rs256')!;
    const next = await rs256.rotate(1500);
    const published = async () => (JSON.parse((await browser.request(`${portal}/oidc/jwks`)).body) as JSONWebKeySet).keys.map((key) => key.kid);
    // Published at once (the change feed rebuilt the provider), and not signing yet.
    await expect.poll(published).toContain(next);
    expect(await published()).toContain(before);
    expect(await idTokenKid()).toBe(before);
    // From its time on, it signs; the old key stays published for tokens signed just before.
    await expect.poll(idTokenKid, { timeout: 10_000, interval: 250 }).toBe(next);
    expect(await published()).toContain(before);
  });

  it('counts its answers in gatehouse_oidc_requests_total', async () => {
    const scrape = await fetch(gatehouse.metricsUrl!);
    const text = await scrape.text();
    expect(text).toMatch(/gatehouse_oidc_requests_total\{step="token",client="grafana",outcome="success"\} [1-9]/);
    expect(text).toMatch(/gatehouse_oidc_requests_total\{step="token",client="grafana",outcome="invalid_client"\} [1-9]/);
    expect(text).toMatch(/gatehouse_oidc_requests_total\{step="authorization",client="reports",outcome="access_denied"\} [1-9]/);
  });

  // Last: it leaves this test's address refused for a minute.
  it('refuses an address that failed client authentication too often, before reading its request', async () => {
    // Threat: guessing a client secret at the token endpoint.
    const browser = new ScriptedBrowser();
    const attempt = () => browser.request(`${portal}/oidc/token`, { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'grafana', client_secret: 'guess-0123456789abcdefghijklmnopqrstuvwxyz' } });
    let answer = await attempt();
    for (let i = 0; i < 40 && answer.status === 401; i++) answer = await attempt();
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_client' });
    // The right secret from the same address is refused too until the window ends.
    const basic = `Basic ${Buffer.from(`grafana:${SECRET}`).toString('base64')}`;
    expect((await browser.request(`${portal}/oidc/token`, { form: { grant_type: 'refresh_token', refresh_token: 'x' }, headers: { authorization: basic } })).status).toBe(429);
  });
});
