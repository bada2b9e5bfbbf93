import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { expect, test, type Browser, type BrowserContext } from '@playwright/test';
import { freePort, signInAtApp, startApache, type RunningProxy } from './support/proxies.js';
import { freePortBlock, runDevelopmentGatehouse } from './support/stack.js';

/**
 * Gatehouse as the OpenID Provider of an app it does not guard: Debian's Apache httpd with
 * mod_auth_openidc, configured from docs/openid-provider/apache.conf as people copy it, protects a site
 * and passes the claims on to what it serves. Apache → Gatehouse → the development IdP and back; the
 * app's policy refuses bob; RP-initiated logout from the site ends the Gatehouse session; revoking the
 * Gatehouse session in the account center logs Apache out through back-channel logout.
 */

let port = 0;
let apachePort = 0;
let gatehouse: { stop(): Promise<void> } | undefined;
let apache: RunningProxy | undefined;
let upstream: Server | undefined;
const portal = () => `http://localhost:${port}`;
const site = () => `http://intranet.localhost:${apachePort}`;

test.beforeAll(async () => {
  // The default start's layout: the portal, the development IdPs (+1, +3), the demo app (+2), metrics (+9).
  port = await freePortBlock([1, 2, 3, 9]);
  apachePort = await freePort();
  // What Apache serves once someone is signed in: the request headers it passes on, as JSON.
  upstream = createServer((request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(request.headers)));
  await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
  const upstreamAddress = `127.0.0.1:${(upstream.address() as { port: number }).port}`;

  const secret = randomBytes(32).toString('base64url');
  // docs/openid-provider/apache.md's app entry, on this test's ports: only admins may sign in.
  gatehouse = await runDevelopmentGatehouse('apache-oidc', port, [
    '  - id: intranet',
    '    name: Intranet',
    `    publicUrl: ${site()}`,
    '    guard: false',
    '    policy:',
    '      allow: [{ groups: [admins] }]',
    '    oidc:',
    `      secrets: [${JSON.stringify(secret)}]`,
    `      redirectUris: [${JSON.stringify(`${site()}/redirect_uri`)}]`,
    `      postLogoutRedirectUris: [${JSON.stringify(`${site()}/`)}]`,
    // Gatehouse resolves the name itself when it posts the logout token: a loopback address it reaches.
    `      backchannelLogoutUri: ${JSON.stringify(`http://127.0.0.1:${apachePort}/redirect_uri?logout=backchannel`)}`,
    '      scopes: [openid, profile, email, groups]',
  ]);
  apache = await startApache({ port: apachePort, host: 'intranet.localhost', issuer: portal(), clientId: 'intranet', clientSecret: secret, upstream: upstreamAddress });
});

test.afterAll(async () => {
  try {
    await apache?.stop();
    await new Promise((resolve) => upstream?.close(resolve));
  } finally {
    await gatehouse?.stop();
  }
});

// eslint-disable-next-line no-empty-pattern -- Playwright hooks take their fixtures first; none needed
test.afterEach(async ({}, testInfo) => {
  if (apache && testInfo.status !== testInfo.expectedStatus) {
    await testInfo.attach('apache log', { body: apache.logs(), contentType: 'text/plain' });
    await testInfo.attach('apache config', { body: apache.config, contentType: 'text/plain' });
  }
});

/** A fresh browser signed in at the site through Apache, Gatehouse and the development IdP. */
async function signedInAtSite(browser: Browser, login: string, password: string): Promise<BrowserContext> {
  const context = await browser.newContext();
  await signInAtApp(await context.newPage(), `${site()}/whoami`, portal(), login, password);
  return context;
}

/**
 * What Apache answers this browser at the site, asked by a script of the site's page with its cookies
 * (only Chromium resolves *.localhost names to loopback): 'served', or 'not signed in' (mod_auth_openidc
 * answers a script's request 401 where it would send a navigation to Gatehouse).
 */
async function siteAnswer(context: BrowserContext): Promise<'served' | 'not signed in' | number> {
  const page = context.pages()[0] ?? (await context.newPage());
  if (new URL(page.url()).origin !== site()) await page.goto(`${site()}/redirect_uri?not-a-sign-in`, { waitUntil: 'commit' }).catch(() => undefined);
  return page.evaluate(async (url) => {
    const response = await fetch(url, { redirect: 'manual', credentials: 'include' });
    if (response.type === 'opaqueredirect' || response.status === 401) return 'not signed in';
    return response.status === 200 ? 'served' : response.status;
  }, `${site()}/whoami`);
}

test('alice signs in to the Apache site with Gatehouse, and the site receives her claims', async ({ browser }) => {
  const context = await signedInAtSite(browser, 'alice@example.com', 'alice');
  const page = context.pages()[0]!;
  const headers = JSON.parse(await page.locator('body').innerText()) as Record<string, string>;
  expect(headers['oidc_claim_email']).toBe('alice@example.com');
  expect(headers['oidc_claim_email_verified']).toMatch(/^(1|true)$/);
  expect(headers['oidc_claim_name']).toBe('Alice Example');
  expect(headers['oidc_claim_groups']?.split(',')).toEqual(expect.arrayContaining(['admins', 'staff']));
  // The issuer is Gatehouse, whatever IdP she used upstream.
  expect(headers['oidc_claim_iss']).toBe(portal());
  await context.close();
});

test('bob, whom the app’s policy refuses, gets Gatehouse’s page naming the app and never reaches the site', async ({ browser }) => {
  // Threat: an OP that signs in anyone its IdPs know (Keycloak #8783): the app's policy must decide.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${site()}/whoami`);
  await expect(page).toHaveURL((url) => url.origin === portal() && url.pathname === '/sign-in');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill('bob@example.com');
  await page.locator('input[name="password"]').fill('bob');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Access denied' })).toBeVisible();
  await expect(page.getByText('may not sign in to Intranet')).toBeVisible();
  expect(new URL(page.url()).origin).toBe(portal());
  // Apache never got a code for bob: it still sends him to sign in.
  expect(await siteAnswer(context)).toBe('not signed in');
  await context.close();
});

test('signing out at the site (RP-initiated logout) ends the Gatehouse session too', async ({ browser }) => {
  const context = await signedInAtSite(browser, 'alice@example.com', 'alice');
  const page = context.pages()[0]!;
  await page.goto(`${site()}/redirect_uri?logout=${encodeURIComponent(`${site()}/`)}`);
  // Gatehouse asks before it ends the session (a link alone must not sign anyone out).
  await expect(page.getByRole('heading', { name: 'Sign out of Gatehouse?' })).toBeVisible();
  await expect(page.getByText('Intranet asks to sign you out')).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  // Back at the site, which asks Gatehouse again: the Gatehouse session is over, so it is the sign-in page.
  await expect(page).toHaveURL((url) => url.origin === portal() && url.pathname === '/sign-in');
  expect((await context.request.get(`${portal()}/api/session`)).status()).toBe(401);
  await context.close();
});

test('revoking the session in the account center logs the site out through back-channel logout', async ({ browser }) => {
  // Threat: an app that keeps a person signed in after Gatehouse ended their session (Authelia #5057).
  const atSite = await signedInAtSite(browser, 'alice@example.com', 'alice');
  expect(await siteAnswer(atSite)).toBe('served');

  // alice, in another browser, ends her other sessions: the one the site was signed in with among them.
  const elsewhere = await browser.newContext();
  const account = await elsewhere.newPage();
  await signInAtApp(account, `${portal()}/account`, portal(), 'alice@example.com', 'alice');
  const sessions = account.getByRole('region', { name: 'Sessions' });
  await account.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await expect(sessions.getByRole('listitem')).toHaveCount(1);

  // Apache's own session ends once the logout token arrives: the site sends the browser to sign in again.
  await expect.poll(() => siteAnswer(atSite), { timeout: 15_000 }).toBe('not signed in');
  await atSite.close();
  await elsewhere.close();
});
