import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { memoryOpAdapter } from '../support/opMemoryAdapter.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/**
 * Gatehouse as the OpenID Provider of an app, end to end: an openid-client v6 relying party discovers
 * Gatehouse, a person signs in through Gatehouse and the real development IdP, the app exchanges the
 * code (PKCE), reads userinfo and refreshes; the app's policy decides at each step.
 */
const SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const NEXT_SECRET = 'grafana-next-secret-0123456789abcdefghijklmnopqrstuv';
const RP = 'http://127.0.0.1:9/callback';

let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  gatehouse = await startGatehouse({
    port,
    opAdapter: memoryOpAdapter(),
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
    ],
    apps: [
      {
        id: 'grafana',
        name: 'Grafana',
        publicUrl: `http://grafana.localhost:${port}`,
        guard: false,
        policy: { allow: [{ groups: ['staff'] }] },
        oidc: { secrets: [SECRET, NEXT_SECRET], redirectUris: [RP], scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'] },
      },
      {
        id: 'reports',
        name: 'Reports',
        publicUrl: `http://reports.localhost:${port}`,
        guard: false,
        policy: { allow: [{ groups: ['admins'] }] },
        oidc: { authentication: 'none', redirectUris: [RP] },
      },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

const insecure = { execute: [client.allowInsecureRequests] };

async function discover(clientId: string, secret?: string): Promise<client.Configuration> {
  return client.discovery(new URL(portal), clientId, secret ? { client_secret: secret } : undefined, secret ? client.ClientSecretBasic(secret) : client.None(), insecure);
}

interface Started {
  url: URL;
  verifier: string;
  state: string;
}

async function authorizationUrl(config: client.Configuration, extra: Record<string, string> = {}): Promise<Started> {
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

/** Follows the browser from the authorization URL to the app's redirect URI, signing in at the IdP as `login` when asked. */
async function authorize(browser: ScriptedBrowser, url: URL, login?: string): Promise<{ back?: URL; hop: Hop }> {
  const atRp = (next: URL) => next.origin === new URL(RP).origin || next.pathname === '/sign-in';
  let { hop, stoppedAt } = await browser.follow(await browser.request(url.href, { headers: { accept: 'text/html' } }), atRp);
  if (stoppedAt?.pathname === '/sign-in') {
    if (!login) throw new Error('asked to sign in');
    const rd = stoppedAt.searchParams.get('rd')!;
    expect(rd).toMatch(/^\/oidc\/interaction\/[\w-]+$/);
    ({ hop } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`)));
    const posted = await browser.request(new URL(formAction(hop.body)!, hop.url).href, { form: { login, password: login.split('@')[0]! } });
    ({ hop, stoppedAt } = await browser.follow(posted, atRp));
  }
  return { back: stoppedAt?.origin === new URL(RP).origin ? stoppedAt : undefined, hop };
}

describe('Gatehouse as the OpenID Provider', () => {
  it('signs a person in through Gatehouse and the IdP: code with PKCE, userinfo, refresh', async () => {
    const config = await discover('grafana', SECRET);
    expect(config.serverMetadata().issuer).toBe(portal);
    expect(config.serverMetadata().token_endpoint).toBe(`${portal}/oidc/token`);
    const browser = new ScriptedBrowser();
    const started = await authorizationUrl(config);
    const { back, hop } = await authorize(browser, started.url, 'bob@example.com');
    expect(back, `${hop.status} ${hop.url} ${hop.body.slice(0, 2000)}`).toBeDefined();
    const tokens = await client.authorizationCodeGrant(config, back!, { pkceCodeVerifier: started.verifier, expectedState: started.state });
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

    // Signed in already: straight back to the app, no IdP in between.
    const again = await authorizationUrl(config);
    const second = await authorize(browser, again.url);
    expect(second.back?.searchParams.get('code')).toBeTruthy();
  });

  it('answers prompt=none without a Gatehouse session with login_required, to the redirect URI', async () => {
    // Threat: a silent authorization that shows a page (or signs someone in) instead of telling the app.
    const config = await discover('grafana', SECRET);
    const started = await authorizationUrl(config, { prompt: 'none' });
    const { back } = await authorize(new ScriptedBrowser(), started.url);
    expect(back?.searchParams.get('error')).toBe('login_required');
    expect(back?.searchParams.get('state')).toBe(started.state);
  });

  it('refuses a person the policy does not admit: the 403 page naming the app, or access_denied with prompt=none', async () => {
    // Threat: an app's policy bypassed by its OpenID Connect door (Keycloak #8783).
    const config = await discover('reports');
    const browser = new ScriptedBrowser();
    const started = await authorizationUrl(config, { scope: 'openid email' });
    const { back, hop } = await authorize(browser, started.url, 'bob@example.com');
    expect(back).toBeUndefined();
    expect(hop.status).toBe(403);
    expect(hop.body).toContain('Reports');
    expect(hop.body).toContain('oidc_access_denied');

    const silent = await authorizationUrl(config, { scope: 'openid email', prompt: 'none' });
    const denied = await authorize(browser, silent.url);
    expect(denied.back?.searchParams.get('error')).toBe('access_denied');
  });

  it('accepts either of two live secrets and refuses a wrong one with invalid_client', async () => {
    // Threat: a guessed or stale client secret redeeming a code.
    const wrong = await discover('grafana', 'not-the-secret-0123456789abcdefghijklmnopqrstuv');
    await expect(client.refreshTokenGrant(wrong, 'x')).rejects.toMatchObject({ status: 401, cause: [{ parameters: { error: 'invalid_client' } }] });
    const next = await discover('grafana', NEXT_SECRET);
    // The next secret authenticates: the refusal is about the token, not the client.
    await expect(client.refreshTokenGrant(next, 'x')).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
