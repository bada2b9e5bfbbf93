import { routes } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiArea } from '../../src/api/index.js';
import { apiAreaDeps, areaHarness, PORTAL, type AreaHarness, type Person } from '../support/areaHarness.js';

/**
 * The portal's own API (`/api/session`, `/api/providers`, `/api/apps`, `/api/me/...`) registered alone
 * with what its door declares, on real stores in an in-memory database.
 */
describe('the api area, alone', () => {
  let harness: AreaHarness;
  let ann: Person;

  beforeAll(async () => {
    harness = await areaHarness(
      {
        organization: { name: 'Example' },
        apps: [
          { id: 'wiki', name: 'Wiki', publicUrl: 'http://wiki.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ domains: ['example.com'] }] } },
          { id: 'vault', name: 'Vault', publicUrl: 'http://vault.localhost:4180', upstream: 'http://127.0.0.1:9', policy: { allow: [{ roles: ['admin'] }] } },
        ],
      },
      async (parts, app) => {
        await app.register(apiArea, apiAreaDeps(parts));
      },
    );
    ann = await harness.signIn('ann@example.com');
  });
  afterAll(() => harness?.close());

  const get = (url: string, person?: Person) => harness.app.inject({ method: 'GET', url, headers: person ? { cookie: person.cookie } : {} });

  it('answers who is signed in, and 401 problem+json for nobody (the guard, declared in the contract)', async () => {
    const nobody = await get(routes.session.getSession.path);
    expect(nobody.statusCode).toBe(401);
    expect(nobody.headers['content-type']).toContain('application/problem+json');
    expect(nobody.json()).toMatchObject({ code: 'unauthenticated' });

    const answer = await get(routes.session.getSession.path, ann);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json()).toEqual({
      user: { id: ann.userId, email: 'ann@example.com', name: 'Person 1', picture: null, groups: [], admin: false },
      session: { id: ann.sessionId, createdAt: expect.any(String), expiresAt: expect.any(String), provider: { id: 'dev', name: 'Dev IdP' } },
    });
  });

  it('hands the person the CSRF token of their own session', async () => {
    expect((await get(routes.session.getCsrfToken.path, ann)).json()).toEqual({ csrfToken: ann.csrf });
  });

  it('lists the providers and the server’s verdict on rd, to anyone', async () => {
    const answer = await get(`${routes.session.getProviders.path}?rd=${encodeURIComponent('https://evil.example/')}`);
    expect(answer.json()).toEqual({
      organization: { name: 'Example' },
      // Its issuer (port 9 on loopback) answers nobody: the active check says so.
      providers: [{ id: 'dev', name: 'Dev IdP', availability: 'unavailable', startUrl: '/.gatehouse/sign-in/dev' }],
      returnTo: { href: '/account', host: null, appName: null },
    });
  });

  it('names the app a sign-in would return to to a signed-in person, so the page can say where they go', async () => {
    const answer = await get(`${routes.session.getProviders.path}?rd=${encodeURIComponent('http://wiki.localhost:4180/pages/1')}`, ann);
    expect(answer.json()).toMatchObject({ returnTo: { href: 'http://wiki.localhost:4180/pages/1', host: 'wiki.localhost:4180', appName: 'Wiki' } });
  });

  // Threat: app names disclosed to strangers. Anyone may ask with any rd; answering each guessed host
  // with its app's name made the public endpoint a directory of the organisation's apps.
  it('gives a stranger the verdict on rd and never an app’s name or host', async () => {
    for (const cookie of [undefined, 'gatehouse_session=forged']) {
      const answer = await harness.app.inject({
        method: 'GET',
        url: `${routes.session.getProviders.path}?rd=${encodeURIComponent('http://wiki.localhost:4180/pages/1')}`,
        headers: cookie ? { cookie } : {},
      });
      expect(answer.json().returnTo).toEqual({ href: 'http://wiki.localhost:4180/pages/1', host: null, appName: null });
      expect(answer.body).not.toContain('Wiki');
    }
  });

  it('offers in the launcher only the apps whose policy lets the person in', async () => {
    expect((await get(routes.session.getApps.path, ann)).json()).toEqual({ apps: [{ id: 'wiki', name: 'Wiki', url: 'http://wiki.localhost:4180/' }] });
  });

  it('lists the person’s sessions and never their secret', async () => {
    const answer = await get(routes.me.getMySessions.path, ann);
    expect(answer.statusCode).toBe(200);
    const [session] = answer.json().sessions;
    expect(session).toMatchObject({ id: ann.sessionId, current: true, provider: { id: 'dev', name: 'Dev IdP' } });
    expect(answer.body).not.toMatch(/secret|hash|token/i);
  });

  it('revokes another session only with CSRF proof, and records it', async () => {
    // Threat: a cross-site page (or another loopback app, same-site with the portal) ending sessions.
    const second = await harness.sessions.create({ userId: ann.userId, identityId: 'i1', providerId: 'dev' });
    const url = `/api/me/sessions/${second.session.id}`;
    const forged = await harness.app.inject({ method: 'DELETE', url, headers: { cookie: ann.cookie, origin: 'http://evil.localhost:4180', 'x-csrf-token': ann.csrf } });
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toMatchObject({ code: 'csrf_failed' });
    const noToken = await harness.app.inject({ method: 'DELETE', url, headers: { cookie: ann.cookie, origin: PORTAL } });
    expect(noToken.json()).toMatchObject({ code: 'csrf_failed' });
    expect(await harness.sessions.findById(second.session.id)).toMatchObject({ revoked_at: null });

    const revoked = await harness.app.inject({ method: 'DELETE', url, headers: ann.changeHeaders });
    expect(revoked.statusCode).toBe(204);
    expect((await harness.sessions.findById(second.session.id))?.revoked_at).not.toBeNull();
    const [event] = await harness.audit.forUser(ann.userId, 1);
    expect(event).toMatchObject({ type: 'session_revoked', details: { by: 'user', sessionId: second.session.id } });
  });

  it('refuses to end the current session here (that is signing out), and a malformed id with a 400', async () => {
    const own = await harness.app.inject({ method: 'DELETE', url: `/api/me/sessions/${ann.sessionId}`, headers: ann.changeHeaders });
    expect(own.statusCode).toBe(400);
    const long = await harness.app.inject({ method: 'DELETE', url: `/api/me/sessions/${'x'.repeat(65)}`, headers: ann.changeHeaders });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toMatchObject({ code: 'bad_request' });
  });

  it('answers a stranger 401 before it looks at the request (no 400 that tells what a valid one is)', async () => {
    const answer = await harness.app.inject({ method: 'DELETE', url: `/api/me/sessions/${'x'.repeat(65)}` });
    expect(answer.statusCode).toBe(401);
  });
});
