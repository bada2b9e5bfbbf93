import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import type { ConfigInput } from '../../../src/config/schema.js';
import { formAction, type Hop, type ScriptedBrowser } from './browser.js';

/**
 * An app signing people in with Gatehouse as its OpenID Provider, for the tests: openid-client v6 as
 * the relying party, a ScriptedBrowser as the person, the development IdP behind Gatehouse's sign-in.
 */

/** The redirect URI the tests' apps register: nothing listens there, the browser stops at it. */
export const RP = 'http://127.0.0.1:9/callback';

type AppInput = NonNullable<ConfigInput['apps']>[number];

/**
 * An app of the configuration that signs in with OpenID Connect only (no guarded host), registering RP
 * and admitting the staff group unless told otherwise; `oidc` adds to (or replaces) its client's settings.
 */
export function oidcApp(id: string, name: string, publicUrl: string, oidc: Partial<NonNullable<AppInput['oidc']>>, policy: AppInput['policy'] = { allow: [{ groups: ['staff'] }] }): AppInput {
  return { id, name, publicUrl, guard: false, policy, oidc: { redirectUris: [RP], ...oidc } };
}

/**
 * The app's configuration from the portal's discovery: client_secret_basic with `secret`, a public
 * client without. With `through`, every request the relying party makes (discovery, token, userinfo)
 * goes through it (to one node, say).
 */
export async function discover(portal: string, clientId: string, secret?: string, through?: client.CustomFetch): Promise<client.Configuration> {
  const config = await client.discovery(new URL(portal), clientId, secret ? { client_secret: secret } : undefined, secret ? client.ClientSecretBasic(secret) : client.None(), {
    execute: [client.allowInsecureRequests],
    ...(through ? { [client.customFetch]: through } : {}),
  });
  if (through) config[client.customFetch] = through;
  return config;
}

/** An authorization request, and what its code exchange needs later. */
export interface Started {
  url: URL;
  verifier: string;
  state: string;
}

/** The authorization URL (PKCE S256, a state), for the scopes of a full sign-in and asking consent unless `extra` says otherwise. */
export async function authorizationUrl(config: client.Configuration, extra: Record<string, string> = {}): Promise<Started> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: RP,
    scope: 'openid email profile groups offline_access',
    prompt: 'consent',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  return { url, verifier, state };
}

/**
 * Follows the browser from the authorization URL (on the portal) to the app's redirect URI, signing in
 * at the development IdP as `login` (password: its local part) when Gatehouse asks; `back` is undefined
 * when the browser stopped elsewhere (a page), `hop` the last answer.
 */
export async function followAuthorization(browser: ScriptedBrowser, url: URL, login?: string): Promise<{ back?: URL; hop: Hop }> {
  const atRp = (next: URL) => next.origin === new URL(RP).origin || next.pathname === '/sign-in';
  let { hop, stoppedAt } = await browser.follow(await browser.request(url.href, { headers: { accept: 'text/html' } }), atRp);
  if (stoppedAt?.pathname === '/sign-in') {
    if (!login) throw new Error('asked to sign in');
    const rd = stoppedAt.searchParams.get('rd')!;
    // The sign-in returns to the OP's login step, nowhere else.
    if (!/^\/oidc\/interaction\/[\w-]+$/.test(rd)) throw new Error(`the sign-in would return to ${rd}`);
    ({ hop } = await browser.follow(await browser.request(`${url.origin}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`)));
    const posted = await browser.request(new URL(formAction(hop.body)!, hop.url).href, { form: { login, password: login.split('@')[0]! } });
    ({ hop, stoppedAt } = await browser.follow(posted, atRp));
  }
  return { back: stoppedAt?.origin === new URL(RP).origin ? stoppedAt : undefined, hop };
}

/** An authorization answered at the app's redirect URI: all its code exchange needs. */
export interface Authorized {
  back: URL;
  verifier: string;
  state: string;
}

/**
 * The whole authorization: its URL (`extra` as for authorizationUrl), the browser to the app's redirect
 * URI, signing in as `login` when asked. Throws when the browser does not get back to the app, with the
 * last answer and `explain()` (the servers' logs, say).
 */
export async function authorize(
  config: client.Configuration,
  browser: ScriptedBrowser,
  { login, extra, explain }: { login?: string; extra?: Record<string, string>; explain?: () => string } = {},
): Promise<Authorized> {
  const { url, verifier, state } = await authorizationUrl(config, extra);
  const { back, hop } = await followAuthorization(browser, url, login);
  if (!back) throw new Error(`no way back to the app: ${hop.status} ${hop.url} ${hop.body.slice(0, 2000)}${explain ? `\n${explain()}` : ''}`);
  return { back, verifier, state };
}

/** The code exchange of an authorization (PKCE verifier and state checked). */
export function redeem(config: client.Configuration, { back, verifier, state }: Authorized): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  return client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
}

/** The app's back-channel logout endpoint: a real listener. */
export interface BackchannelEndpoint {
  /** Its URI, for the app's `backchannelLogoutUri`. */
  uri: string;
  /** Every logout token posted to it, in order. */
  tokens: string[];
  close(): Promise<void>;
}

/** Starts the app's back-channel logout endpoint on a free loopback port: it keeps each logout token posted and answers 200 after `holdMs`. */
export async function startBackchannelEndpoint(holdMs = 0): Promise<BackchannelEndpoint> {
  const tokens: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token');
      if (token) tokens.push(token);
      const answer = () => response.writeHead(200).end();
      if (holdMs > 0) setTimeout(answer, holdMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel`,
    tokens,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
