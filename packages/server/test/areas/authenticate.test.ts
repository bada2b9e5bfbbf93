import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateArea } from '../../src/authenticate/index.js';
import { LogoutTokenStore } from '../../src/authenticate/logoutTokenStore.js';
import { SignInAttempts } from '../../src/authenticate/signInAttempts.js';
import { cookieNames } from '../../src/sessions/cookies.js';
import { areaHarness, PORTAL, type AreaHarness, type Person } from '../support/areaHarness.js';

/**
 * The forms people post to /.gatehouse/ (sign-out, linking, test sign-in) declare their guard; the
 * authenticate area registered alone shows what it answers before any IdP is asked.
 */
describe('the authenticate area’s forms, alone', () => {
  let harness: AreaHarness;
  let ann: Person;
  let root: Person;
  const form = (fields: Record<string, string>) => ({
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

  beforeAll(async () => {
    harness = await areaHarness({}, async (parts, app) => {
      await app.register(authenticateArea, {
        running: { current: parts.config },
        portalOrigin: PORTAL,
        secureCookies: false,
        cookies: cookieNames(false),
        providers: parts.providers,
        attempts: new SignInAttempts(parts.database.db, parts.config.signIn.attemptLifetime),
        accounts: parts.accounts,
        sessions: parts.sessions,
        audit: parts.audit,
        signInSettings: parts.signInSettings,
        apps: parts.apps,
        logoutTokens: new LogoutTokenStore(parts.database.db),
        isAdmin: parts.isAdmin,
      });
    });
    ann = await harness.signIn('ann@example.com');
    root = await harness.signIn('root@example.com', { roles: ['admin'] });
  });
  afterAll(() => harness?.close());

  it('sends a signed-out sign-out to /signed-out, clearing whatever cookie is left', async () => {
    const answer = await harness.app.inject({ method: 'POST', url: '/.gatehouse/sign-out', ...form({}), headers: { ...form({}).headers, cookie: 'gatehouse_session=stale' } });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/signed-out');
    expect(String(answer.headers['set-cookie'])).toMatch(/^gatehouse_session=;/);
  });

  // Threat: a page on another origin signing a person out (or a forged token doing it from anywhere).
  it('signs out only with the form’s CSRF token from the portal’s origin; a forged one changes nothing', async () => {
    const forged = await harness.app.inject({
      method: 'POST',
      url: '/.gatehouse/sign-out',
      payload: `csrf_token=${ann.csrf}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: ann.cookie, origin: 'http://evil.localhost:4180' },
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.headers['set-cookie']).toBeUndefined();
    expect((await harness.sessions.findById(ann.sessionId))?.revoked_at).toBeNull();

    const signedOut = await harness.app.inject({
      method: 'POST',
      url: '/.gatehouse/sign-out',
      payload: `csrf_token=${ann.csrf}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: ann.cookie, origin: PORTAL },
    });
    expect(signedOut.statusCode).toBe(303);
    // The IdP cannot be reached here: the person still lands on /signed-out, and the session is over.
    expect(signedOut.headers.location).toBe(`${PORTAL}/signed-out`);
    expect((await harness.sessions.findById(ann.sessionId))?.revoked_at).not.toBeNull();
    expect((await harness.audit.forUser(ann.userId, 1))[0]).toMatchObject({ type: 'sign_out' });
  });

  it('sends a signed-out person who posts a link or a test sign-in to sign in first, then back', async () => {
    const link = await harness.app.inject({ method: 'POST', url: '/.gatehouse/link/dev', ...form({}) });
    expect(link.statusCode).toBe(303);
    expect(link.headers.location).toBe('/sign-in?rd=%2Faccount');
    const test = await harness.app.inject({ method: 'POST', url: '/.gatehouse/test-sign-in/dev', ...form({}) });
    expect(test.headers.location).toBe('/sign-in?rd=%2Fadmin%2Fproviders%2Fdev');
  });

  // Threat: a person who is not an admin running test sign-ins against the organisation's providers.
  it('refuses a test sign-in to anyone but an admin, and to an admin without the form’s token', async () => {
    const bob = await harness.signIn('bob@example.com');
    const notAdmin = await harness.app.inject({ method: 'POST', url: '/.gatehouse/test-sign-in/dev', payload: `csrf_token=${bob.csrf}`, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: bob.cookie, origin: PORTAL } });
    expect(notAdmin.statusCode).toBe(403);
    expect(notAdmin.body).toContain('forbidden');
    const noToken = await harness.app.inject({ method: 'POST', url: '/.gatehouse/test-sign-in/dev', ...form({}), headers: { ...form({}).headers, cookie: root.cookie, origin: PORTAL } });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.body).toContain('csrf_failed');
  });

  it('answers a sign-out by link (GET) with 405, and a provider id that is not one with 400', async () => {
    expect((await harness.app.inject({ method: 'GET', url: '/.gatehouse/sign-out' })).statusCode).toBe(405);
    const bad = await harness.app.inject({ method: 'POST', url: '/.gatehouse/link/NOT_AN_ID', payload: `csrf_token=${root.csrf}`, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: root.cookie, origin: PORTAL } });
    expect(bad.statusCode).toBe(400);
  });
});
