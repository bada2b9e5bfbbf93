import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser, signedInThroughDevIdp, submitIdpLogin } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { logLines } from './support/logLines.js';

/**
 * A provider whose registration at the IdP is wrong — a wrong client secret, a redirect URI the IdP
 * does not know — is a configuration error, not an outage: the person reads that the provider is not
 * set up correctly and to tell an administrator (`provider_misconfigured`), the log and the console's
 * test sign-in say what to change, and nothing says "could not reach". Provoked for real against the
 * development IdP, with and without a pushed authorization request.
 */
let idp: DevIdpProcess;
let gatehouse: RunningGatehouse;
let portal: string;
let admin: { browser: ScriptedBrowser; csrf: string };
const lines: Array<Record<string, unknown>> = [];
const WRONG_SECRET = 'not-the-secret-registered-at-the-idp';

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  // Only these redirect URIs are registered: `unregistered` has none.
  const registered = ['dev', 'wrong-secret', 'wrong-secret-par'].map((id) => `${portal}/.gatehouse/callback/${id}`);
  idp = await startDevIdpProcess({ redirectUris: registered, postLogoutRedirectUris: [`${portal}/signed-out`] });
  const dev = { issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] };
  gatehouse = await startGatehouse({
    port,
    admins: { groups: [{ provider: 'dev', group: 'admins' }] },
    providers: [
      { id: 'dev', name: 'Development IdP', ...dev },
      { id: 'wrong-secret', name: 'Wrong secret', ...dev, clientSecret: WRONG_SECRET, pushedAuthorizationRequests: 'never' },
      { id: 'wrong-secret-par', name: 'Wrong secret (PAR)', ...dev, clientSecret: WRONG_SECRET, pushedAuthorizationRequests: 'always' },
      { id: 'unregistered', name: 'Unregistered redirect', ...dev, pushedAuthorizationRequests: 'always' },
    ],
    logStream: logLines(lines),
  });
  // alice is an admin (the dev IdP's admins group).
  admin = await signedInThroughDevIdp(portal, 'alice@example.com', 'alice');
});

afterAll(async () => {
  await gatehouse?.close();
  await idp?.close();
});

/** The page's sentence, as a person reads it (entities decoded). */
function sentence(html: string): string {
  const paragraph = /<h1>[^<]*<\/h1>\s*<p>([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return paragraph.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

/** The log line written under a page's reference. */
function loggedUnder(html: string): Record<string, unknown> | undefined {
  const reference = /Reference <code>([0-9a-f]+)<\/code>/.exec(html)?.[1];
  expect(reference).toBeDefined();
  return lines.find((line) => line.reference === reference);
}

/** What a person sees who starts a sign-in with `providerId` (and, when the IdP asks, signs in there as bob). */
async function signInWith(providerId: string) {
  const browser = new ScriptedBrowser();
  const start = await browser.request(`${portal}/.gatehouse/sign-in/${providerId}`, { headers: { accept: 'text/html' } });
  if (start.status !== 303) return start;
  const { hop: form } = await browser.follow(start);
  const callbackUrl = await submitIdpLogin(browser, form, 'bob@example.com', 'bob');
  return browser.request(callbackUrl.href, { headers: { accept: 'text/html' } });
}

/** The console's "Test sign-in" with a provider: its result, as the console reads it. */
async function testSignIn(providerId: string): Promise<Record<string, unknown>> {
  const start = await admin.browser.request(`${portal}/.gatehouse/test-sign-in/${providerId}`, { form: { csrf_token: admin.csrf }, headers: { origin: portal } });
  expect(start.status, start.body).toBe(303);
  const { stoppedAt } = await admin.browser.follow(start, (url) => url.origin === portal && url.pathname.startsWith('/admin/'));
  const match = /^\/admin\/providers\/([^/]+)\/tests\/([^/]+)$/.exec(stoppedAt?.pathname ?? '');
  expect(match, `the test's result page, not ${stoppedAt?.href}`).not.toBeNull();
  return JSON.parse((await admin.browser.request(`${portal}/api/admin/providers/${match![1]}/tests/${match![2]}`)).body) as Record<string, unknown>;
}

const PERSON_READS = /is not set up correctly for this site, so signing in with it does not work right now\. Tell your administrator/;

describe('a provider misconfigured at the IdP', () => {
  it('a wrong client secret, found at the PAR endpoint: the person is told to tell an administrator, the log says to check the secret', async () => {
    const page = await signInWith('wrong-secret-par');
    expect(page.status).toBe(502);
    expect(page.body).toContain('provider_misconfigured');
    expect(sentence(page.body)).toMatch(PERSON_READS);
    expect(page.body).not.toMatch(/couldn.t reach/i);
    // The fix is for admins: not on the person's page.
    expect(page.body).not.toMatch(/client secret/i);
    const logged = loggedUnder(page.body);
    expect(logged).toMatchObject({ level: 50, code: 'provider_misconfigured' });
    expect(logged!.fix).toMatch(/answered invalid_client.*Check the client secret/);
    // Threat: secrets in logs. The wrong secret itself is never written.
    expect(JSON.stringify(lines)).not.toContain(WRONG_SECRET);
  });

  it('a wrong client secret, found at the token endpoint after the person signed in at the IdP', async () => {
    const page = await signInWith('wrong-secret');
    expect(page.status).toBe(502);
    expect(sentence(page.body)).toMatch(PERSON_READS);
    expect(loggedUnder(page.body)!.fix).toMatch(/invalid_client.*Check the client secret/);
    const { events } = await gatehouse.services.audit.query({ type: 'sign_in_failed' }, 1, 1);
    expect(events[0]!.details).toMatchObject({ code: 'provider_misconfigured' });
  });

  it('an unregistered redirect URI: the log names the exact URI to register', async () => {
    const page = await signInWith('unregistered');
    expect(page.status).toBe(502);
    expect(sentence(page.body)).toMatch(PERSON_READS);
    expect(page.body).not.toContain('/.gatehouse/callback/unregistered');
    expect(loggedUnder(page.body)!.fix).toContain(`Register ${portal}/.gatehouse/callback/unregistered exactly as a redirect URI of client "gatehouse"`);
  });

  it("the console's test sign-in names the fix for each", async () => {
    const secret = await testSignIn('wrong-secret-par');
    expect(secret).toMatchObject({ result: 'failed', code: 'provider_misconfigured', message: expect.stringMatching(PERSON_READS) });
    expect(secret.fix).toMatch(/Check the client secret/);
    const redirect = await testSignIn('unregistered');
    expect(redirect).toMatchObject({ result: 'failed', code: 'provider_misconfigured' });
    expect(redirect.fix).toContain(`Register ${portal}/.gatehouse/callback/unregistered exactly`);
    expect(JSON.stringify([secret, redirect])).not.toContain(WRONG_SECRET);
  });
});
