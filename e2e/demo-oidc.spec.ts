import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { freePortBlock, runDevelopmentGatehouse } from './support/stack.js';

/**
 * "Sign in with Gatehouse" as a newcomer meets it: Gatehouse started with the development defaults (as
 * `npm start` does, on free ports), the demo app by itself at http://127.0.0.1:<port+2> as the
 * `demo-oidc` client, Gatehouse its OpenID Provider, the development IdP upstream. alice signs in and
 * the demo shows her claims; "Sign out everywhere" in the account center signs her out of the demo
 * through back-channel logout; the demo's own "Sign out" (RP-initiated logout) ends the Gatehouse
 * session and the IdP's, and lands back at the demo.
 */

let port = 0;
let gatehouse: { stop(): Promise<void> } | undefined;
const portal = () => `http://localhost:${port}`;
const demo = () => `http://127.0.0.1:${port + 2}`;

test.beforeAll(async () => {
  // The default start's layout: the portal, the development IdPs (+1, +3), the demo app (+2), metrics (+9).
  port = await freePortBlock([1, 2, 3, 9]);
  gatehouse = await runDevelopmentGatehouse('demo-oidc', port);
});

test.afterAll(async () => {
  await gatehouse?.stop();
});

/** From the demo's home page through Gatehouse and the development IdP to the demo's page of claims. */
async function signInAtDemo(page: Page, login = 'alice@example.com', password = 'alice'): Promise<void> {
  await page.goto(`${demo()}/`);
  await expect(page.getByRole('heading', { name: 'Gatehouse demo app' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
  await expect(page).toHaveURL((url) => url.origin === portal() && url.pathname === '/sign-in');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await expect(page.locator('input[name="login"]')).toBeVisible();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${demo()}/me`);
  await expect(page.getByRole('heading', { name: 'Signed in with Gatehouse' })).toBeVisible();
}

/** Whether the demo still has a session for this browser: its /me page, or its home page to sign in. */
async function demoSignedIn(context: BrowserContext): Promise<boolean> {
  const response = await context.request.get(`${demo()}/me`, { maxRedirects: 0 });
  return response.status() === 200;
}

test('alice signs in to the demo with Gatehouse and sees her claims; "Sign out everywhere" signs her out of the demo', async ({ browser }, testInfo) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInAtDemo(page);
  const idToken = page.getByRole('region', { name: 'ID token claims' });
  await expect(idToken.getByRole('row', { name: /^iss/ })).toContainText(portal());
  await expect(idToken.getByRole('row', { name: /^email / })).toContainText('alice@example.com');
  await expect(idToken.getByRole('row', { name: /^aud/ })).toContainText('demo-oidc');
  // The sid that back-channel logout names (the demo's registration has a back-channel URI).
  await expect(idToken.getByRole('row', { name: /^sid/ })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Userinfo' }).getByRole('row', { name: /^groups/ })).toContainText('staff');

  // The pages a newcomer sees, at a laptop's size and a phone's.
  for (const size of [
    { width: 1280, height: 800 },
    { width: 375, height: 740 },
  ]) {
    await page.setViewportSize(size);
    await page.goto(`${demo()}/me`);
    await page.screenshot({ path: testInfo.outputPath(`demo-me-${size.width}.png`), fullPage: true });
    await page.goto(`${demo()}/`);
    await expect(page.getByText('Signed in as alice@example.com')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath(`demo-home-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // Threat: an app that keeps a person signed in after Gatehouse ended their session.
  const account = await context.newPage();
  await account.goto(`${portal()}/account`);
  await account.getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
  await account.getByRole('dialog').getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
  await expect(account).toHaveURL(`${portal()}/signed-out`);
  // The demo's back-channel endpoint received the logout token: its session is gone.
  await expect.poll(() => demoSignedIn(context), { timeout: 20_000 }).toBe(false);
  await page.goto(`${demo()}/me`);
  await expect(page).toHaveURL(`${demo()}/`);
  await expect(page.getByRole('button', { name: 'Sign in with Gatehouse' })).toBeVisible();
  await context.close();
});

test('the demo’s "Sign out" ends the Gatehouse session and the IdP’s, and returns to the demo', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInAtDemo(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  // Gatehouse asks before it ends the session (a link alone must not sign anyone out).
  await expect(page.getByRole('heading', { name: 'Sign out of Gatehouse?' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  // Through the IdP's logout and back to the demo's registered post-logout page.
  await expect(page).toHaveURL((url) => url.origin === demo() && url.pathname === '/signed-out');
  await expect(page.getByRole('heading', { name: 'Signed out' })).toBeVisible();
  expect((await context.request.get(`${portal()}/api/session`)).status()).toBe(401);
  expect(await demoSignedIn(context)).toBe(false);
  // The IdP's session ended too: signing in again asks for the password at the IdP.
  await signInAtDemo(page);
  await context.close();
});
