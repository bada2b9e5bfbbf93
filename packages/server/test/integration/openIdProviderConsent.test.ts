import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser, signedInThroughDevIdp, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/**
 * The consent of a third-party app (`oidc.thirdParty`), end to end: an openid-client v6 relying party,
 * Gatehouse and the real development IdP. The login step sends the browser to the consent page; the
 * page's JSON routes show what the app asks and answer it (Allow grants, Deny answers access_denied).
 */
const SECRET = 'board-secret-0123456789abcdefghijklmnopqrstuvwxyz0123';
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
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
    ],
    apps: [
      {
        id: 'board',
        name: 'Community Board',
        publicUrl: `http://board.localhost:${port}`,
        guard: false,
        policy: { allow: [{ groups: ['staff'] }] },
        oidc: { secrets: [SECRET], redirectUris: [RP], scopes: ['openid', 'profile', 'email'], thirdParty: true },
      },
    ],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

const insecure = { execute: [client.allowInsecureRequests] };

async function discover(): Promise<client.Configuration> {
  return client.discovery(new URL(portal), 'board', { client_secret: SECRET }, client.ClientSecretBasic(SECRET), insecure);
}

interface Started {
  url: URL;
  verifier: string;
  state: string;
}

async function authorizationUrl(config: client.Configuration, scope = 'openid email profile'): Promise<Started> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: RP,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  return { url, verifier, state };
}

interface Reached {
  /** The app's redirect URI, with the answer. */
  back?: URL;
  /** The consent page's step uid, when the browser was sent there. */
  consent?: string;
  hop: Hop;
}

const CONSENT_PAGE = /^\/authorize\/([\w-]+)$/;

/** Follows the browser from `url` to the app or the consent page, signing in at the IdP as `login` when asked. */
async function navigate(browser: ScriptedBrowser, url: string, login?: string): Promise<Reached> {
  const stop = (next: URL) => next.origin === new URL(RP).origin || next.pathname === '/sign-in' || CONSENT_PAGE.test(next.pathname);
  let { hop, stoppedAt } = await browser.follow(await browser.request(url, { headers: { accept: 'text/html' } }), stop);
  if (stoppedAt?.pathname === '/sign-in') {
    if (!login) throw new Error('asked to sign in');
    const rd = stoppedAt.searchParams.get('rd')!;
    ({ hop } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`)));
    const posted = await browser.request(new URL(formAction(hop.body)!, hop.url).href, { form: { login, password: login.split('@')[0]! } });
    ({ hop, stoppedAt } = await browser.follow(posted, stop));
  }
  return {
    back: stoppedAt?.origin === new URL(RP).origin ? stoppedAt : undefined,
    consent: stoppedAt ? CONSENT_PAGE.exec(stoppedAt.pathname)?.[1] : undefined,
    hop,
  };
}

async function csrfOf(browser: ScriptedBrowser): Promise<string> {
  return JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string;
}

/** The person's recent activity of consent answers, newest first (the person's, over every test of theirs). */
async function answers(browser: ScriptedBrowser): Promise<Array<{ id: string; type: string; summary: string }>> {
  const { events } = JSON.parse((await browser.request(`${portal}/api/me/activity`)).body) as { events: Array<{ id: string; type: string; summary: string }> };
  return events.filter((event) => event.type.startsWith('oidc_consent_'));
}

const readConsent = (browser: ScriptedBrowser, uid: string) => browser.request(`${portal}/api/consent/${uid}`, { headers: { accept: 'application/json' } });

const answer = (browser: ScriptedBrowser, uid: string, choice: 'allow' | 'deny', csrf: string | undefined) =>
  browser.request(`${portal}/api/consent/${uid}/${choice}`, { method: 'POST', headers: { origin: portal, accept: 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) } });

/** A person signed in through an authorization of the board, stopped at its consent page. */
async function atConsent(login: string, scope?: string) {
  const config = await discover();
  const browser = new ScriptedBrowser();
  const started = await authorizationUrl(config, scope);
  const reached = await navigate(browser, started.url.href, login);
  expect(reached.consent, `${reached.hop.status} ${reached.hop.url} ${reached.hop.body.slice(0, 1000)}`).toBeDefined();
  return { config, browser, started, uid: reached.consent!, csrf: await csrfOf(browser) };
}

describe('consent to a third-party app', () => {
  it('shows what the app asks, grants it on Allow, and does not ask the same session again', async () => {
    const { config, browser, started, uid, csrf } = await atConsent('bob@example.com');
    const read = await readConsent(browser, uid);
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body)).toEqual({
      uid,
      app: { id: 'board', name: 'Community Board' },
      origin: 'http://127.0.0.1:9',
      scopes: ['openid', 'email', 'profile'],
      person: { email: 'bob@example.com', name: 'Bob Example' },
    });

    const allowed = await answer(browser, uid, 'allow', csrf);
    expect(allowed.status, allowed.body).toBe(200);
    const { location } = JSON.parse(allowed.body) as { location: string };
    expect(new URL(location).origin).toBe(portal);
    const { back } = await navigate(browser, location);
    expect(back).toBeDefined();
    const tokens = await client.authorizationCodeGrant(config, back!, { pkceCodeVerifier: started.verifier, expectedState: started.state });
    expect(tokens.scope?.split(' ').sort()).toEqual(['email', 'openid', 'profile']);
    const info = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(info.email).toBe('bob@example.com');
    expect((await answers(browser))[0]).toMatchObject({ type: 'oidc_consent_given', summary: 'You allowed Community Board to sign you in' });

    // Threat: a double submission (another tab) granting twice or to another result: the step is gone,
    // said plainly as problem+json, nothing changes.
    const again = await answer(browser, uid, 'allow', csrf);
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(again.body)).toMatchObject({ code: 'oidc_consent_closed' });

    // The same session, the same scopes (or fewer): its grant covers them, nobody is asked again.
    const next = await authorizationUrl(config, 'openid email');
    expect((await navigate(browser, next.url.href)).back?.searchParams.get('code')).toBeTruthy();
    const same = await authorizationUrl(config, 'openid email profile');
    expect((await navigate(browser, same.url.href)).back?.searchParams.get('code')).toBeTruthy();

    // Another Gatehouse session of the same person: the grant was the other session's, so it asks again.
    const other = await atConsent('bob@example.com');
    expect(other.uid).not.toBe(uid);
  });

  it('asks again for more scopes than the session granted, and adds them to the same grant', async () => {
    const { config, browser, uid, csrf } = await atConsent('bob@example.com', 'openid email');
    const first = await answer(browser, uid, 'allow', csrf);
    expect((await navigate(browser, (JSON.parse(first.body) as { location: string }).location)).back).toBeDefined();
    const more = await authorizationUrl(config, 'openid email profile');
    const asked = await navigate(browser, more.url.href);
    expect(asked.consent).toBeDefined();
    expect(JSON.parse((await readConsent(browser, asked.consent!)).body).scopes).toEqual(['openid', 'email', 'profile']);
    const allowed = await answer(browser, asked.consent!, 'allow', csrf);
    const { back } = await navigate(browser, (JSON.parse(allowed.body) as { location: string }).location);
    const tokens = await client.authorizationCodeGrant(config, back!, { pkceCodeVerifier: more.verifier, expectedState: more.state });
    expect(tokens.scope?.split(' ').sort()).toEqual(['email', 'openid', 'profile']);
    // One grant of this session for the app, now with the three scopes (the account center lists it once).
    const sessions = JSON.parse((await browser.request(`${portal}/api/me/sessions`)).body) as { sessions: Array<{ current: boolean; apps: Array<{ app: { id: string }; scopes: string[] }> }> };
    const apps = sessions.sessions.find((session) => session.current)!.apps.filter((app) => app.app.id === 'board');
    expect(apps.map((app) => [...app.scopes].sort())).toEqual([['email', 'openid', 'profile']]);
  });

  it('answers the app access_denied at its redirect URI on Deny', async () => {
    const { config, browser, started, uid, csrf } = await atConsent('bob@example.com');
    const denied = await answer(browser, uid, 'deny', csrf);
    expect(denied.status, denied.body).toBe(200);
    const { back } = await navigate(browser, (JSON.parse(denied.body) as { location: string }).location);
    expect(back?.searchParams.get('error')).toBe('access_denied');
    expect(back?.searchParams.get('state')).toBe(started.state);
    expect((await answers(browser))[0]).toMatchObject({ type: 'oidc_consent_refused', summary: 'You refused Community Board' });
    await expect(client.authorizationCodeGrant(config, back!, { pkceCodeVerifier: started.verifier, expectedState: started.state })).rejects.toMatchObject({ error: 'access_denied' });
  });

  it('lets nobody but the session the step belongs to read or answer it', async () => {
    const bob = await atConsent('bob@example.com');
    const alice = await signedInThroughDevIdp(portal, 'alice@example.com', 'alice');
    const unknown = 'Zq3VwBvY8yPe0uKcHnXg1';
    // Threat: IDOR. A consent step's uid leaked to someone else (a log, a shared screen): their session
    // reads exactly what an unknown uid reads, and their answer is refused as an unknown one's is.
    const read = await readConsent(alice.browser, bob.uid);
    expect(read.status).toBe(404);
    expect(JSON.parse(read.body).code).toBe('not_found');
    expect((await readConsent(alice.browser, unknown)).status).toBe(404);
    for (const choice of ['allow', 'deny'] as const) {
      const answered = await answer(alice.browser, bob.uid, choice, alice.csrf);
      const unknownAnswered = await answer(alice.browser, unknown, choice, alice.csrf);
      expect([answered.status, JSON.parse(answered.body).code]).toEqual([unknownAnswered.status, JSON.parse(unknownAnswered.body).code]);
      expect(answered.status).toBe(409);
    }
    // Threat: a signed-out browser holding the uid: no session, no answer.
    expect((await answer(new ScriptedBrowser(), bob.uid, 'allow', undefined)).status).toBe(401);
    // Bob's step is untouched by all of it: he can still answer it.
    expect((await readConsent(bob.browser, bob.uid)).status).toBe(200);
    expect((await answer(bob.browser, bob.uid, 'allow', bob.csrf)).status).toBe(200);
  });

  it('refuses an answer without CSRF proof', async () => {
    const { browser, uid, csrf } = await atConsent('bob@example.com');
    const before = await answers(browser);
    // Threat: cross-site request forgery. A page elsewhere posting Allow in the person's browser (the
    // session cookie goes along) has neither the session-bound token nor the portal's Origin.
    const withoutToken = await answer(browser, uid, 'allow', undefined);
    expect(withoutToken.status).toBe(403);
    expect(JSON.parse(withoutToken.body).code).toBe('csrf_failed');
    const foreignOrigin = await browser.request(`${portal}/api/consent/${uid}/allow`, { method: 'POST', headers: { origin: 'http://evil.example', 'x-csrf-token': csrf } });
    expect(foreignOrigin.status).toBe(403);
    // Nothing was answered: the step still waits, and nothing is in the activity.
    expect((await readConsent(browser, uid)).status).toBe(200);
    expect(await answers(browser)).toEqual(before);
    expect((await answer(browser, uid, 'deny', csrf)).status).toBe(200);
  });

  it('never grants scopes beyond the client’s', async () => {
    const config = await discover();
    const browser = new ScriptedBrowser();
    // Threat: an app asking for more than it was registered for (groups, offline_access) to slip them
    // into the person's consent. oidc-provider refuses the request at the authorization endpoint
    // (invalid_scope, naming the scope), before any consent page; the consent routes' own filter
    // (provide/consent.test.ts) stands behind it.
    const started = await authorizationUrl(config, 'openid email groups offline_access');
    const reached = await navigate(browser, started.url.href, 'bob@example.com');
    expect(reached.consent).toBeUndefined();
    expect(reached.back?.searchParams.get('error')).toBe('invalid_scope');
    expect(reached.back?.searchParams.get('state')).toBe(started.state);
  });
});
