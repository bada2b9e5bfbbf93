import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, type Hop, ScriptedBrowser, submitIdpLogin } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { logLines } from './support/logLines.js';

/**
 * The portal answers at publicUrl's host only (http/canonicalHost.ts). Opened at another loopback name
 * for the same port (127.0.0.1, [::1]), a person is sent to the same path at publicUrl before a
 * sign-in starts — before, the sign-in cookie was set on 127.0.0.1, the IdP came back to localhost,
 * and the person read "Sign-in expired" with no cause in the log. An unknown host gets a page saying
 * so, never the portal; app hosts, forward-auth and health checks answer as before.
 */
let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let port: number;
let portal: string;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  gatehouse = await startGatehouse({
    port,
    providers: [{ id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, scopes: ['openid', 'email', 'profile'] }],
    // nginx in front, on loopback (forward-auth's X-Forwarded-* are believed from it only).
    trustedProxies: ['127.0.0.1/32'],
    // Its upstream is never reached here: only signed-out requests are sent.
    apps: [{ id: 'wiki', name: 'Wiki', publicUrl: `http://wiki.localhost:${port}`, upstream: `http://127.0.0.1:9`, policy: { allow: [{ anyUser: true }] } }],
    logStream: logLines(lines),
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

/** A request to the listening port as if the browser had typed `host`. */
function at(host: string, target: string, init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}, browser = new ScriptedBrowser()): Promise<Hop> {
  return browser.request(`http://127.0.0.1:${port}${target}`, { ...init, headers: { host, accept: 'text/html', ...init.headers } });
}

describe('the portal at another loopback name', () => {
  it.each(['127.0.0.1', '[::1]'])('%s:port is sent to the same path at publicUrl, query kept, nothing set', async (name) => {
    const hop = await at(`${name}:${port}`, '/sign-in?rd=%2Faccount');
    expect(hop.status).toBe(307);
    expect(hop.headers.get('location')).toBe(`${portal}/sign-in?rd=%2Faccount`);
    expect(hop.headers.get('cache-control')).toBe('no-store');
    expect(hop.headers.getSetCookie()).toEqual([]);
  });

  it('a sign-in started at 127.0.0.1 is started at publicUrl instead, and completes', async () => {
    const browser = new ScriptedBrowser(['localhost']);
    const start = await browser.request(`http://127.0.0.1:${port}/.gatehouse/sign-in/dev?rd=%2Faccount`, { headers: { accept: 'text/html' } });
    expect(start.status).toBe(307);
    // No sign-in cookie for a host the IdP will not come back to.
    expect(start.headers.getSetCookie()).toEqual([]);
    expect(start.headers.get('location')).toBe(`${portal}/.gatehouse/sign-in/dev?rd=%2Faccount`);
    const { hop: form } = await browser.follow(start);
    expect(form.body).toContain('name="password"');
    const posted = await browser.request(new URL(formAction(form.body)!, form.url).href, { form: { login: 'bob@example.com', password: 'bob' } });
    const { hop } = await browser.follow(posted);
    expect(new URL(hop.url).origin).toBe(portal);
    expect(new URL(hop.url).pathname).toBe('/account');
    const session = await browser.request(`${portal}/api/session`);
    expect(session.status).toBe(200);
  });

  it('a form post or an API call there is refused, not sent on', async () => {
    // Threat: cross-site request forgery through an alias. No portal page is served at an alias, so a
    // post there comes from elsewhere: it is refused with nothing done, never forwarded to publicUrl.
    const form = await at(`127.0.0.1:${port}`, '/.gatehouse/sign-out', { form: { csrf_token: 'x' } });
    expect(form.status).toBe(421);
    expect(form.headers.get('location')).toBeNull();
    const api = await at(`127.0.0.1:${port}`, '/api/me/sessions/revoke-others', { method: 'POST', headers: { accept: 'application/json' } });
    expect(api.status).toBe(421);
    expect(JSON.parse(api.body)).toMatchObject({ code: 'unknown_host' });
  });

  it('the redirect goes to publicUrl whatever the request says', async () => {
    // Threat: open redirect. A target that looks like a network path, a backslash, or a forwarded
    // host must not move the redirect off the portal's origin.
    for (const target of ['//evil.example/x', '/\\evil.example/x', '/%2F%2Fevil.example', '/./../..//evil.example']) {
      const hop = await at(`127.0.0.1:${port}`, target, { headers: { 'x-forwarded-host': 'evil.example', forwarded: 'host=evil.example' } });
      expect(hop.status, target).toBe(307);
      expect(new URL(hop.headers.get('location')!).origin, target).toBe(portal);
    }
  });
});

describe('an unknown host', () => {
  it.each(['evil.localhost:PORT', 'evil.example', 'localhost:PORT.', 'localhost:PORT@evil.example', '127.0.0.1:1'])(
    'gets a page saying so, not the portal: %s',
    async (pattern) => {
      const host = pattern.replace('PORT', String(port));
      // Threat: host header injection / DNS rebinding. A name Gatehouse was not given must not serve
      // the portal (its cookies, its pages) nor be echoed into a redirect.
      const hop = await at(host, '/sign-in');
      expect(hop.status).toBe(421);
      expect(hop.headers.get('content-type')).toMatch(/^text\/html/);
      expect(hop.body).toContain('unknown_host');
      expect(hop.body).toMatch(/Reference <code>[0-9a-f]{12}<\/code>/);
      expect(hop.body).toContain(`href="${portal}/"`);
      expect(hop.body).not.toContain('evil');
      expect(hop.headers.get('location')).toBeNull();
      expect(hop.headers.getSetCookie()).toEqual([]);
    },
  );

  it('answers the API as problem+json', async () => {
    const hop = await at('evil.example', '/api/session', { headers: { accept: 'application/json' } });
    expect(hop.status).toBe(421);
    expect(hop.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(hop.body)).toMatchObject({ code: 'unknown_host', reference: expect.any(String) });
  });

  it('still gets the health checks, the JWKS and forward-auth, which answer on any host', async () => {
    expect((await at('10.0.0.7:4180', '/healthz')).status).toBe(200);
    expect((await at('10.0.0.7:4180', '/readyz')).status).toBe(200);
    expect((await at('gatehouse.internal', '/.gatehouse/jwks.json')).status).toBe(200);
    // nginx's auth_request asks under Gatehouse's internal name: not signed in is a 401, not a 421.
    const forwarded = { accept: '*/*', 'x-forwarded-proto': 'http', 'x-forwarded-host': `wiki.localhost:${port}`, 'x-forwarded-uri': '/page', 'x-forwarded-method': 'GET' };
    expect((await at('gatehouse.internal', '/.gatehouse/auth/wiki', { headers: forwarded })).status).toBe(401);
  });
});

describe('app hosts', () => {
  it('are served as before: a signed-out visit is sent to sign in at publicUrl', async () => {
    const hop = await at(`wiki.localhost:${port}`, '/page');
    expect(hop.status).toBe(302);
    expect(hop.headers.get('location')).toMatch(/^\/\.gatehouse\/start\?rd=/);
  });
});

describe('a callback without its attempt', () => {
  it('is "Sign-in expired" for the person, and the log says why', async () => {
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev`);
    const { hop: form } = await browser.follow(start);
    const stoppedAt = await submitIdpLogin(browser, form, 'bob@example.com', 'bob');
    // The callback arrives in a browser that has no sign-in cookie (as when it was set on another host).
    const from = lines.length;
    const callback = await new ScriptedBrowser().request(stoppedAt.href, { headers: { accept: 'text/html' } });
    expect(callback.status).toBe(400);
    expect(callback.body).toContain('sign_in_expired');
    expect(lines.slice(from)).toContainEqual(
      expect.objectContaining({ level: 40, msg: 'sign-in callback without its attempt', reason: 'no_binding_cookie', provider: 'dev', why: expect.stringContaining('another address than publicUrl') }),
    );
    // Used once: the same state again is unknown.
    const again = lines.length;
    await browser.request(stoppedAt.href, { headers: { accept: 'text/html' } });
    expect(lines.slice(again)).toContainEqual(expect.objectContaining({ level: 40, reason: 'unknown_state' }));
  });
});
