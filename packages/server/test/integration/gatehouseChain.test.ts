import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, ScriptedBrowser } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';

/**
 * Two Gatehouses in a chain, both real servers: the second (a branch office's) signs people in with the
 * first (headquarters') as its upstream OpenID Connect provider, a `providers:` entry like any IdP; the
 * first signs them in with the development IdP. Second → first → development IdP and back, then the
 * first Gatehouse's back-channel logout ends the second's session when the person signs out at the first.
 * The portals are on two host names (localhost and 127.0.0.1): cookies do not separate by port.
 */
const SECRET = 'branch-office-secret-0123456789abcdefghijklmnopqrstuvwxyz';

let idp: DevIdpProcess;
let headquarters: RunningGatehouse;
let branch: RunningGatehouse;
let hq: string;
let office: string;

beforeAll(async () => {
  const hqPort = await freePort();
  const officePort = await freePort();
  hq = `http://localhost:${hqPort}`;
  office = `http://127.0.0.1:${officePort}`;
  idp = await startDevIdpProcess({ redirectUris: [`${hq}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${hq}/signed-out`] });
  headquarters = await startGatehouse({
    port: hqPort,
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
    ],
    apps: [
      {
        id: 'branch-office',
        name: 'Branch office Gatehouse',
        publicUrl: office,
        guard: false,
        policy: { allow: [{ groups: ['staff'] }] },
        oidc: {
          secrets: [SECRET],
          redirectUris: [`${office}/.gatehouse/callback/headquarters`],
          postLogoutRedirectUris: [`${office}/signed-out`],
          backchannelLogoutUri: `${office}/.gatehouse/backchannel-logout/headquarters`,
          scopes: ['openid', 'profile', 'email', 'groups'],
        },
      },
    ],
  });
  // Started once the first answers: a provider's discovery document is read as the server starts.
  branch = await startGatehouse({
    port: officePort,
    publicUrl: office,
    providers: [
      {
        id: 'headquarters',
        name: 'Headquarters',
        kind: 'oidc',
        issuer: hq,
        clientId: 'branch-office',
        clientSecret: SECRET,
        createUsers: true,
        trustGroups: true,
        scopes: ['openid', 'email', 'profile', 'groups'],
      },
    ],
  });
});

afterAll(async () => {
  await branch?.close();
  await headquarters?.close();
  await idp?.close();
});

/** A browser signed in at the branch office's portal through headquarters and the development IdP. */
async function signedInAtBranch(login: string): Promise<ScriptedBrowser> {
  const browser = new ScriptedBrowser();
  // The branch office sends the browser to headquarters' authorization endpoint; headquarters, with no
  // session of its own yet, to its sign-in page for the interaction.
  const atHqSignIn = (url: URL) => url.origin === hq && url.pathname === '/sign-in';
  const { stoppedAt, hop: last } = await browser.follow(await browser.request(`${office}/.gatehouse/sign-in/headquarters`), atHqSignIn);
  expect(stoppedAt, `${last.status} ${last.url} ${last.body.slice(0, 500)}`).toBeDefined();
  const rd = stoppedAt!.searchParams.get('rd')!;
  expect(rd).toMatch(/^\/oidc\/interaction\/[\w-]+$/);
  const { hop: form } = await browser.follow(await browser.request(`${hq}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(rd)}`));
  const posted = await browser.request(new URL(formAction(form.body)!, form.url).href, { form: { login, password: login.split('@')[0]! } });
  // The development IdP → headquarters' callback → its authorization endpoint → the branch office's callback → its portal.
  const { hop } = await browser.follow(posted, undefined, 20);
  expect(new URL(hop.url).origin, `${hop.status} ${hop.url} ${hop.body.slice(0, 500)}`).toBe(office);
  return browser;
}

async function sessionAt(browser: ScriptedBrowser, portal: string): Promise<{ status: number; email?: string }> {
  const answer = await browser.request(`${portal}/api/session`, { headers: { accept: 'application/json' } });
  if (answer.status !== 200) return { status: answer.status };
  const body = JSON.parse(answer.body) as { user?: { email?: string } };
  return { status: 200, email: body.user?.email };
}

describe('a Gatehouse whose upstream provider is another Gatehouse', () => {
  it('signs a person in through the first, and ends the session when the first’s back-channel logout arrives', async () => {
    const alice = await signedInAtBranch('alice@example.com');
    const bob = await signedInAtBranch('bob@example.com');
    expect(await sessionAt(alice, office)).toEqual({ status: 200, email: 'alice@example.com' });
    expect(await sessionAt(alice, hq)).toEqual({ status: 200, email: 'alice@example.com' });
    expect(await sessionAt(bob, office)).toEqual({ status: 200, email: 'bob@example.com' });

    // alice signs out at headquarters (its portal's sign-out, a POST with its CSRF token).
    const csrf = (JSON.parse((await alice.request(`${hq}/api/csrf`)).body) as { csrfToken: string }).csrfToken;
    const signOut = await alice.request(`${hq}/.gatehouse/sign-out`, { form: { csrf_token: csrf }, headers: { origin: hq } });
    expect(signOut.status).toBeLessThan(400);
    expect((await sessionAt(alice, hq)).status).toBe(401);

    // Threat: a downstream portal that keeps a person signed in after the provider it trusts ended their
    // session (Authelia #5057): headquarters' logout token, delivered from its outbox, ends the branch session.
    await expect.poll(async () => (await sessionAt(alice, office)).status, { timeout: 15_000, interval: 250 }).toBe(401);
    // Threat: a logout token that ends sessions it does not name: bob's branch session, another sid, lives on.
    expect(await sessionAt(bob, office)).toEqual({ status: 200, email: 'bob@example.com' });
  });
});
