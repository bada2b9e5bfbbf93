import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_ORGANIZATION } from '../../../src/accounts/admission.js';
import { freePort } from '../../support/ports.js';
import { ScriptedBrowser, type Hop } from '../support/browser.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';

/**
 * An app that signs people in with OpenID Connect alone (`guard: false`) is no guarded host: Gatehouse
 * answers nothing on its host. Threat: a guard:false app that still opens something through the paths
 * made for guarded hosts — its host proxied (to nothing) or answered with the portal, a forward-auth
 * check naming it answered 200 with identity headers (a proxy someone points at it would then let
 * people in on a policy nobody set up for a host), the app-host handshake handing a code for it, or a
 * return-to sending a freshly signed-in person to it as if it were an app Gatehouse guards. It shares
 * its host with a guarded app here, which keeps it.
 */
let gatehouse: RunningGatehouse;
let port = 0;
let sso = '';
let shared = '';
let cookie = '';

beforeAll(async () => {
  port = await freePort();
  sso = `http://sso.localhost:${port}`;
  shared = `http://wiki.localhost:${port}`;
  gatehouse = await startGatehouse({
    port,
    trustedProxies: ['127.0.0.1/8'],
    providers: [{ id: 'corp', name: 'Corp', issuer: 'http://127.0.0.1:9', clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    apps: [
      { id: 'sso', name: 'SSO only', publicUrl: sso, guard: false, policy: { allow: [{ anyUser: true }] }, oidc: { redirectUris: ['https://sso.example.com/callback'] } },
      { id: 'wiki', name: 'Wiki', publicUrl: shared, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } },
      // The same host as the guarded wiki: allowed for an app Gatehouse does not guard.
      { id: 'wiki-sso', name: 'Wiki sign-in', publicUrl: shared, guard: false, policy: { allow: [{ anyUser: true }] }, oidc: { redirectUris: ['https://wiki.example.com/callback'] } },
    ],
  });
  const { accounts, sessions } = gatehouse.services;
  const provider = { id: 'corp', name: 'Corp', allowedDomains: [], createUsers: true, trustEmail: false };
  const profile = { subject: 'bob', email: 'bob@example.com', emailVerified: true, name: 'Bob', picture: undefined, groups: [], sid: undefined, extra: {} };
  const { user, identity } = await accounts.signIn(provider, profile, OPEN_ORGANIZATION);
  const { secret } = await sessions.create({ userId: user.id, identityId: identity.id, providerId: 'corp' });
  cookie = `gatehouse_session=${secret}`;
});

afterAll(async () => {
  await gatehouse?.close();
});

function at(host: string, target: string, headers: Record<string, string> = {}): Promise<Hop> {
  return new ScriptedBrowser().request(`http://127.0.0.1:${port}${target}`, { headers: { host, accept: 'text/html', ...headers } });
}

const forwarded = (host: string) => ({ 'x-forwarded-proto': 'http', 'x-forwarded-host': host, 'x-forwarded-uri': '/', 'x-forwarded-method': 'GET' });

describe('an app Gatehouse does not guard', () => {
  it('its host is unknown: no proxy, no portal', async () => {
    const hop = await at(`sso.localhost:${port}`, '/', { accept: 'application/json' });
    expect(hop.status).toBe(421);
    expect(JSON.parse(hop.body)).toMatchObject({ code: 'unknown_host' });
  });

  it('a host it shares with a guarded app stays the guarded app’s', async () => {
    const hop = await at(`wiki.localhost:${port}`, '/', { accept: 'application/json' });
    // Signed out on the guarded wiki: asked to sign in, as on any guarded host.
    expect(hop.status).toBe(401);
  });

  it.each(['auth', 'forward-auth'])('a forward-auth check naming it (/.gatehouse/%s/sso) lets nobody in, signed in or not', async (mode) => {
    for (const headers of [{}, { cookie }] as Array<Record<string, string>>) {
      const answer = await fetch(`${gatehouse.url}/.gatehouse/${mode}/sso`, { headers: { ...forwarded(`sso.localhost:${port}`), ...headers }, redirect: 'manual' });
      expect(answer.status).toBe(403);
      expect(answer.headers.get('x-gatehouse-user') ?? '').toBe('');
    }
  });

  it('the app-host handshake knows it not', async () => {
    const answer = await fetch(`${gatehouse.url}/.gatehouse/app-authorize?app=sso&state=${'s'.repeat(43)}&rd=${encodeURIComponent(`${sso}/`)}`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual' });
    expect(answer.status).toBe(404);
  });

  it('a return-to on its origin is not accepted (the default instead)', async () => {
    const answer = await fetch(`${gatehouse.url}/api/providers?rd=${encodeURIComponent(`${sso}/dashboard`)}`, { headers: { accept: 'application/json' } });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { returnTo: { href: string; host: string | null } };
    expect(body.returnTo.href).not.toContain('sso.localhost');
    // The guarded app's origin is one.
    const guarded = (await (await fetch(`${gatehouse.url}/api/providers?rd=${encodeURIComponent(`${shared}/page`)}`)).json()) as { returnTo: { href: string } };
    expect(guarded.returnTo.href).toBe(`${shared}/page`);
  });
});
