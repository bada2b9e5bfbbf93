import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { formAction, ScriptedBrowser, type Hop } from './browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './devIdpProcess.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse, type StartOptions } from './gatehouse.js';
import { startHostileIdp, type HostileIdp } from './hostileIdp.js';
import { startUpstream, type Upstream } from './upstream.js';

/**
 * The security suites' deployment: the real server on loopback with the real development IdP (a
 * separate process, its test control API on, so a test can change a person's groups) and a
 * controllable IdP (to refuse a refresh on demand), an upstream that echoes what it receives, and
 * three apps: `staff` (group staff only), `any` (anyone signed in) and `tokens` (anyone, passed the
 * access token). alice is an admin by config.
 */
export interface SecurityRig {
  gatehouse: RunningGatehouse;
  dev: DevIdpProcess;
  hostile: HostileIdp;
  upstream: Upstream;
  portal: string;
  apps: { staff: string; any: string; tokens: string };
  loopbackHosts: string[];
  /** Sets a development IdP user's groups (every later token and refresh carries them). */
  setGroups(login: string, groups: string[]): Promise<void>;
  /** Sets what a development IdP user's profile says of their email, as a self-service profile page lets them. */
  setEmail(login: string, email: string, emailVerified: boolean): Promise<void>;
  close(): Promise<void>;
}

const CONTROL = 'security-suite-control-token';

export async function startSecurityRig(overrides: Omit<StartOptions, 'port' | 'store'> = {}, extraApps: NonNullable<StartOptions['apps']> = []): Promise<SecurityRig> {
  const port = await freePort();
  const portal = `http://localhost:${port}`;
  const [dev, hostile, upstream] = await Promise.all([
    startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`], controlToken: CONTROL, cookiePrefix: 'secdev' }),
    startHostileIdp('gatehouse'),
    startUpstream(),
  ]);
  const apps = { staff: `http://staff.localhost:${port}`, any: `http://any.localhost:${port}`, tokens: `http://tokens.localhost:${port}` };
  const gatehouse = await startGatehouse({
    port,
    admins: { emails: ['alice@example.com'] },
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: dev.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'], pushedAuthorizationRequests: 'never' },
      { id: 'hostile', name: 'Controllable IdP', issuer: hostile.issuer, clientId: 'gatehouse', clientSecret: 'hostile-secret', createUsers: true },
    ],
    apps: [
      { id: 'staff', name: 'Staff app', publicUrl: apps.staff, upstream: upstream.url, policy: { allow: [{ groups: ['staff'] }] } },
      { id: 'any', name: 'Any app', publicUrl: apps.any, upstream: upstream.url, policy: { allow: [{ anyUser: true }] } },
      // It needs the IdPs' access tokens: sessions then keep every kind of token (what a leak could expose).
      { id: 'tokens', name: 'Token app', publicUrl: apps.tokens, upstream: upstream.url, passAccessToken: ['dev', 'hostile'], policy: { allow: [{ anyUser: true }] } },
      ...extraApps,
    ],
    ...overrides,
  });
  return {
    gatehouse,
    dev,
    hostile,
    upstream,
    portal,
    apps,
    loopbackHosts: ['staff.localhost', 'any.localhost', 'tokens.localhost'],
    setGroups: (login, groups) => control(dev, login, 'groups', { groups }),
    setEmail: (login, email, emailVerified) => control(dev, login, 'email', { email, emailVerified }),
    async close() {
      await gatehouse.close();
      await Promise.all([dev.close(), hostile.close(), upstream.close()]);
    },
  };
}

/** The development IdP's test control API (packages/dev-idp/src/controlRoutes.ts). */
async function control(dev: DevIdpProcess, login: string, what: 'groups' | 'email', body: unknown): Promise<void> {
  const response = await fetch(`${dev.issuer}/__control/users/${encodeURIComponent(login)}/${what}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 204) throw new Error(`the development IdP refused the ${what} change: ${response.status}`);
}

export interface SignedIn {
  browser: ScriptedBrowser;
  csrf: string;
  sessionId: string;
  userId: string;
}

const isCallback = (url: URL) => url.pathname.startsWith('/.gatehouse/callback/');

/**
 * Signs a person in at the portal through the real provider: `dev` fills the development IdP's login
 * form with login and password, `hostile` (or any other provider on a controllable IdP) needs neither.
 * A given browser is reused (it may carry a planted cookie).
 */
export async function signIn(rig: SecurityRig, provider: 'dev' | 'hostile' | (string & {}), login = 'alice@example.com', password = 'alice', browser = new ScriptedBrowser(rig.loopbackHosts)): Promise<SignedIn> {
  const first = await browser.follow(await browser.request(`${rig.portal}/.gatehouse/sign-in/${provider}`), isCallback);
  let callback = first.stoppedAt;
  if (!callback) {
    const posted = await browser.request(new URL(formAction(first.hop.body)!, first.hop.url).href, { form: { login, password } });
    callback = (await browser.follow(posted, isCallback)).stoppedAt;
  }
  if (!callback) throw new Error('the IdP did not send the browser back to Gatehouse');
  const done = await browser.request(callback.href);
  if (done.status !== 303 && done.status !== 302) throw new Error(`the callback answered ${done.status}: ${done.body.slice(0, 200)}`);
  const csrf = JSON.parse((await browser.request(`${rig.portal}/api/csrf`)).body).csrfToken as string;
  const me = JSON.parse((await browser.request(`${rig.portal}/api/session`)).body) as { session: { id: string }; user: { id: string } };
  return { browser, csrf, sessionId: me.session.id, userId: me.user.id };
}

/** Opens an app URL as a person would (following the handshake through the portal); the last answer. */
export async function open(browser: ScriptedBrowser, url: string): Promise<Hop> {
  const first = await browser.request(url, { headers: { accept: 'text/html' } });
  return (await browser.follow(first)).hop;
}

/** A state-changing API call with the CSRF token and the portal's Origin, as the front end makes it. */
export function post(rig: SecurityRig, who: SignedIn, path: string, body?: unknown): Promise<Hop> {
  return who.browser.request(`${rig.portal}${path}`, {
    method: 'POST',
    headers: { origin: rig.portal, 'x-csrf-token': who.csrf, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request to the server on loopback written as given: any Host, any target, no client normalisation. */
export function raw(rig: SecurityRig, target: string, headers: Record<string, string | string[]>, method = 'GET', body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: rig.gatehouse.port, path: target, method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end(body);
  });
}
