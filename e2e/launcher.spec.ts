import { expect, test, type Page } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The app launcher on `/` and the sign-in page's return to an app: each person sees only the apps
 * their groups open (whoami: staff, admin-demo: admins; see support/stack.ts), each a link to the
 * app at its own host. Every test has its own page (a fresh browser context), so no session carries over.
 */

const portalPort = () => new URL(portalUrl()).port;
const appUrl = (host: string) => `http://${host}.localhost:${portalPort()}/`;

const launcher = (page: Page) => page.getByRole('region', { name: 'Your apps' });

test("alice's launcher lists Whoami and Admin demo, as links to their hosts", async ({ page }) => {
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await page.goto(portalUrl());
  await expect(page.getByRole('heading', { level: 1, name: 'Welcome, Alice Example' })).toBeVisible();

  const apps = launcher(page).getByRole('link');
  await expect(apps).toHaveText(['Whoami', 'Admin demo']);
  await expect(launcher(page).getByRole('link', { name: 'Whoami', exact: true })).toHaveAttribute('href', appUrl('whoami'));
  await expect(launcher(page).getByRole('link', { name: 'Admin demo', exact: true })).toHaveAttribute('href', appUrl('admin-demo'));
  await expect(launcher(page).getByText(`whoami.localhost:${portalPort()}`, { exact: true })).toBeVisible();
  await expect(launcher(page).getByRole('listitem')).toHaveCount(2);
  await expect(page.getByText('No apps are available to you yet.')).toHaveCount(0);
  await expectAccessible(page);

  // The launcher's link takes her to the app at its own host, signed in there through the handshake.
  await launcher(page).getByRole('link', { name: 'Whoami', exact: true }).click();
  await page.waitForURL((url) => url.origin === new URL(appUrl('whoami')).origin);
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
});

test("bob's launcher lists only Whoami", async ({ page }) => {
  await signInWith(page, 'Development IdP', 'bob@example.com', 'bob');
  await page.goto(portalUrl());
  await expect(page.getByRole('heading', { level: 1, name: 'Welcome, Bob Example' })).toBeVisible();
  await expect(launcher(page).getByRole('link')).toHaveText(['Whoami']);
  await expect(launcher(page).getByRole('link', { name: 'Admin demo' })).toHaveCount(0);
  expect((await page.request.get(`${portalUrl()}/api/apps`)).status()).toBe(200);
  await expectAccessible(page);
});

test('a person with no apps sees the empty state', async ({ page }) => {
  await signInWith(page, 'Partner IdP', 'carol@partner.example', 'carol');
  await page.goto(portalUrl());
  await expect(page.getByText('No apps are available to you yet.')).toBeVisible();
  await expect(launcher(page).getByRole('link')).toHaveCount(0);
  await expectAccessible(page);
});

test('/api/apps is 401 when signed out', async ({ request }) => {
  const response = await request.get(`${portalUrl()}/api/apps`);
  expect(response.status()).toBe(401);
  expect(response.headers()['content-type']).toMatch(/^application\/problem\+json/);
});

test('the sign-in page carries an app URL as the return-to, and refuses other schemes', async ({ page }) => {
  const whoami = appUrl('whoami');

  // Signed out: the provider button starts the sign-in with the app URL as rd.
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent(whoami)}`);
  const start = page.getByRole('link', { name: 'Sign in with Development IdP' });
  await expect(start).toHaveAttribute('href', `/.gatehouse/sign-in/dev?rd=${encodeURIComponent(whoami)}`);
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent('javascript:alert(1)')}`);
  await expect(start).toHaveAttribute('href', `/.gatehouse/sign-in/dev?rd=${encodeURIComponent('/account')}`);

  // Signed in already: "Continue" goes to the app.
  await signInWith(page, 'Development IdP', 'bob@example.com', 'bob');
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent(whoami)}`);
  const next = page.getByRole('link', { name: `Continue to whoami.localhost:${portalPort()}` });
  await expect(next).toHaveAttribute('href', whoami);
  await expectAccessible(page);
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent('https://user:pass@evil.example/')}`);
  await expect(page.getByRole('link', { name: 'Continue to your account' })).toHaveAttribute('href', '/account');
});

test('opening an app signed out goes through the sign-in page and back to the app', async ({ page }) => {
  const whoami = appUrl('whoami');
  await page.goto(whoami);
  await expect(page).toHaveURL((url) => url.origin === portalUrl() && url.pathname === '/sign-in' && url.searchParams.get('rd') === whoami);
  await expect(page.getByRole('link', { name: 'Sign in with Development IdP' })).toHaveAttribute(
    'href',
    `/.gatehouse/sign-in/dev?rd=${encodeURIComponent(whoami)}`,
  );
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  await page.locator('input[name="login"]').fill('bob@example.com');
  await page.locator('input[name="password"]').fill('bob');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === new URL(whoami).origin);
  await expect(page.getByText('bob@example.com').first()).toBeVisible();
});
