import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateArea } from '../../src/authenticate/index.js';
import { LogoutTokenStore } from '../../src/authenticate/logoutTokenStore.js';
import { SignInAttempts } from '../../src/authenticate/signInAttempts.js';
import { cookieNames } from '../../src/sessions/cookies.js';
import { newSecret } from '../../src/sessions/sessionToken.js';
import { areaHarness, PORTAL, type AreaHarness } from '../support/areaHarness.js';

/**
 * Threat: discovering a hidden provider. A provider added in the console is offered nowhere until a
 * test sign-in with it passed (or an admin published it): to everyone but the console it does not
 * exist. Its callback answered "Sign-in expired" (400) where an unknown id answers 404, and its sign-in
 * start, when it was also turned off, "Signing in with <name> is turned off" (403): a stranger trying
 * ids learnt which ones exist, and their names. Every public door of a hidden provider now answers as an
 * unknown id's does.
 */
describe('a hidden provider answers as an unknown id', () => {
  let harness: AreaHarness;
  let attempts: SignInAttempts;

  beforeAll(async () => {
    const idp = { issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' };
    harness = await areaHarness(
      {
        providers: [
          { id: 'dev', name: 'Dev IdP', ...idp },
          { id: 'quiet', name: 'Quiet IdP', ...idp },
          { id: 'quiet-off', name: 'Quiet Off IdP', enabled: false, ...idp },
        ],
      },
      async (parts, app) => {
        // As the console stores them: 'quiet' and 'quiet-off' are console providers never published.
        const [dev, quiet, quietOff] = parts.config.providers;
        parts.providers.setConfigProviders([dev!]);
        parts.providers.setConsoleProviders([quiet!, quietOff!], new Map([['quiet', null], ['quiet-off', null]]));
        attempts = new SignInAttempts(parts.database.db, parts.config.signIn.attemptLifetime);
        await app.register(authenticateArea, {
          running: { current: parts.config },
          portalOrigin: PORTAL,
          secureCookies: false,
          cookies: cookieNames(false),
          providers: parts.providers,
          attempts,
          accounts: parts.accounts,
          sessions: parts.sessions,
          audit: parts.audit,
          signInSettings: parts.signInSettings,
          apps: parts.apps,
          logoutTokens: new LogoutTokenStore(parts.database.db),
          isAdmin: parts.isAdmin,
        });
      },
    );
    expect(harness.providers.hidden('quiet')).toBe(true);
    expect(harness.providers.hidden('quiet-off')).toBe(true);
  });
  afterAll(() => harness?.close());

  /** What a stranger can compare between two answers: everything but the reference id. */
  async function seen(url: string, accept = 'application/json') {
    const answer = await harness.app.inject({ method: 'GET', url, headers: { accept } });
    const body = answer.body.replaceAll(/"reference":"[^"]*"/g, '"reference":"…"').replaceAll(/Reference <code>[^<]*<\/code>/g, 'Reference <code>…</code>');
    return { status: answer.statusCode, type: answer.headers['content-type'], body };
  }

  it("the callback of a hidden provider answers 404 as an unknown id's, whatever the state", async () => {
    // An attempt of a published provider, brought to the hidden one's callback (its state is taken).
    const state = newSecret();
    await attempts.create({ state, bindingSecret: newSecret(), providerId: 'dev', nonce: 'n', codeVerifier: 'v', returnTo: '/', purpose: 'sign-in' });
    for (const query of ['', '?state=', `?state=${newSecret()}`, `?code=abc&state=${newSecret()}`, `?state=${state}`]) {
      const unknown = await seen(`/.gatehouse/callback/nobody${query}`);
      expect(unknown.status, query).toBe(404);
      for (const hidden of ['quiet', 'quiet-off']) expect(await seen(`/.gatehouse/callback/${hidden}${query}`), `${hidden}${query}`).toEqual(unknown);
    }
    // A browser gets the same page for both too.
    expect(await seen('/.gatehouse/callback/quiet?state=x', 'text/html')).toEqual(await seen('/.gatehouse/callback/nobody?state=x', 'text/html'));
    // A published provider's callback still says what happened.
    expect((await seen(`/.gatehouse/callback/dev?state=${newSecret()}`)).status).toBe(400);
  });

  it('the sign-in start of a hidden provider answers 404, turned off or not, never naming it', async () => {
    const unknown = await seen('/.gatehouse/sign-in/nobody');
    expect(unknown.status).toBe(404);
    for (const hidden of ['quiet', 'quiet-off']) {
      const answer = await seen(`/.gatehouse/sign-in/${hidden}`);
      expect(answer, hidden).toEqual(unknown);
      expect(answer.body).not.toContain('Quiet');
    }
  });
});
