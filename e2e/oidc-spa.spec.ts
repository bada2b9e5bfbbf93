import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { freePort } from './support/proxies.js';
import { freePortBlock, runDevelopmentGatehouse } from './support/stack.js';

/**
 * Gatehouse as the OpenID Provider of a single-page app, a public client (no secret) written with
 * oidc-client-ts, the browser OpenID Connect client such apps use: the page, on its own origin, signs in
 * with PKCE, exchanges the code at Gatehouse's token endpoint and reads userinfo from the browser (CORS),
 * refreshes with its refresh token, and signs out with RP-initiated logout. Chromium → the page →
 * Gatehouse → the development IdP and back.
 */

let port = 0;
let spaPort = 0;
let gatehouse: { stop(): Promise<void> } | undefined;
let spa: Server | undefined;
const portal = () => `http://localhost:${port}`;
const app = () => `http://127.0.0.1:${spaPort}`;

test.beforeAll(async () => {
  // The default start's layout: the portal, the development IdPs (+1, +3), the demo app (+2), metrics (+9).
  port = await freePortBlock([1, 2, 3, 9]);
  spaPort = await freePort();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const page = readFileSync(path.join(here, 'support/oidc-spa.html'), 'utf8').replace('__ISSUER__', portal());
  const library = readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('oidc-client-ts')), '../browser/oidc-client-ts.js'));
  // The app's static server: the library, and the page at every other path (/ and /callback).
  spa = createServer((request, response) => {
    if (request.url === '/oidc-client-ts.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(library);
    else if (request.url === '/favicon.ico') response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => spa!.listen(spaPort, '127.0.0.1', resolve));

  gatehouse = await runDevelopmentGatehouse('oidc-spa', port, [
    '  - id: spa',
    '    name: Single-page app',
    `    publicUrl: ${app()}`,
    '    guard: false',
    '    policy:',
    '      allow: [{ groups: [staff] }]',
    '    oidc:',
    '      authentication: none',
    `      redirectUris: [${JSON.stringify(`${app()}/callback`)}]`,
    `      postLogoutRedirectUris: [${JSON.stringify(`${app()}/`)}]`,
    '      scopes: [openid, profile, email, offline_access]',
    // The email reaches the page only through userinfo: what the page shows of it proves that call.
    '      claimsInIdToken: false',
  ]);
});

test.afterAll(async () => {
  try {
    await new Promise((resolve) => spa?.close(resolve));
  } finally {
    await gatehouse?.stop();
  }
});

async function shown(page: Page, id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await page.locator(`#${id}`).innerText()) as Record<string, unknown>;
}

test('alice signs in to the single-page app with oidc-client-ts: PKCE, code exchange and userinfo over CORS, refresh, sign-out', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${app()}/`);
  await expect(page.locator('#status')).toHaveText('signed out');

  const authorization = page.waitForRequest((request) => request.url().startsWith(`${portal()}/oidc/authorize?`));
  await page.getByRole('button', { name: 'Sign in' }).click();
  // oidc-client-ts asks with PKCE (S256), which Gatehouse requires of a public client.
  const asked = new URL((await authorization).url()).searchParams;
  expect(asked.get('code_challenge_method')).toBe('S256');
  expect(asked.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  expect(asked.get('client_id')).toBe('spa');
  await expect(page).toHaveURL((url) => url.origin === portal() && url.pathname === '/sign-in');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill('alice@example.com');
  await page.locator('input[name="password"]').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${app()}/`);
  await expect(page.locator('#error')).toHaveText('');
  await expect(page.locator('#status')).toHaveText('signed in as alice@example.com');

  const idToken = await shown(page, 'id-token');
  expect(idToken).toMatchObject({ iss: portal(), aud: 'spa' });
  // claimsInIdToken: false: the email and name came from userinfo, which the page called itself.
  expect(idToken.email).toBeUndefined();
  expect(await shown(page, 'profile')).toMatchObject({ sub: idToken.sub, email: 'alice@example.com', name: 'Alice Example' });

  // offline_access: the refresh token, used by the page at the token endpoint (CORS again), rotates the tokens.
  const before = await page.locator('#access-token').innerText();
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.locator('#access-token')).not.toHaveText(before);
  await expect(page.locator('#error')).toHaveText('');
  expect((await shown(page, 'profile')).email).toBe('alice@example.com');

  // Threat: a page of another origin (a malicious site, or another app) reading a person's data from
  // Gatehouse with a token it got hold of: userinfo answers it without a CORS header, and the browser
  // refuses the answer to that page. The registered origin is answered (the check can fail).
  const accessToken = await page.locator('#access-token').innerText();
  const userinfo = (origin: string) => context.request.get(`${portal()}/oidc/userinfo`, { headers: { origin, authorization: `Bearer ${accessToken}` } });
  expect((await userinfo(app())).headers()['access-control-allow-origin']).toBe(app());
  for (const origin of ['http://evil.localhost:8080', `http://localhost:${spaPort}`]) {
    expect((await userinfo(origin)).headers()['access-control-allow-origin'], origin).toBeUndefined();
  }
  const elsewhere = await context.newPage();
  await elsewhere.goto(`http://localhost:${spaPort}/`);
  const read = (at: Page) =>
    at.evaluate(
      ([url, token]) => fetch(url!, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.json().then((body) => (body as { email?: string }).email ?? 'no email'), () => 'refused'),
      [`${portal()}/oidc/userinfo`, accessToken],
    );
  expect(await read(elsewhere)).toBe('refused');
  expect(await read(page)).toBe('alice@example.com');
  await elsewhere.close();

  // RP-initiated logout: Gatehouse asks, the Gatehouse session ends, the browser is back at the page.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign out of Gatehouse?' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(`${app()}/`);
  await expect(page.locator('#status')).toHaveText('signed out');
  expect((await context.request.get(`${portal()}/api/session`)).status()).toBe(401);
  await context.close();
});

test('Gatehouse answers CORS at the token endpoint only to the origins of the client’s redirect URIs', async ({ playwright }) => {
  const request = await playwright.request.newContext();
  const token = (origin: string) =>
    request.post(`${portal()}/oidc/token`, { headers: { origin }, form: { grant_type: 'refresh_token', client_id: 'spa', refresh_token: 'not-a-refresh-token' } });
  // The registered origin is answered (so the check below can fail: the header is there when allowed).
  expect((await token(app())).headers()['access-control-allow-origin']).toBe(app());
  // Threat: a page of another origin calling the token endpoint as the single-page app (a public client,
  // known by its id alone) with a code or refresh token it got hold of, and reading the tokens: no CORS header for it.
  for (const origin of ['http://evil.localhost:8080', 'http://127.0.0.1:1', `http://localhost:${spaPort}`]) {
    expect((await token(origin)).headers()['access-control-allow-origin'], origin).toBeUndefined();
  }
  await request.dispose();
});
