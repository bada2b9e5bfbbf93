import { expect, test, type Page } from '@playwright/test';
import { expectAccessible, portalUrl } from './support/fixtures.js';

interface WhoamiJson {
  headers: Record<string, string>;
  identity: { email: string | null };
}

/** The apps behind Gatehouse's own reverse proxy, reached by browsers at *.localhost on the portal's port. */
const appUrl = (app: 'whoami' | 'admin-demo', path = '/') => {
  const portal = new URL(portalUrl());
  return `http://${app}.localhost:${portal.port}${path}`;
};

async function openAs(page: Page, url: string, login: string, password: string) {
  await page.goto(url);
  // Signed out: the app host sends the browser to the portal's sign-in, then the IdP.
  if (new URL(page.url()).pathname === '/sign-in') {
    await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  }
  const loginField = page.locator('input[name="login"]');
  if (await loginField.isVisible().catch(() => false)) {
    await loginField.fill(login);
    await page.locator('input[name="password"]').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await expect(page).toHaveURL(url);
}

test('signed out → sign-in → the app, with identity headers and a verified assertion', async ({ page }) => {
  await page.goto(appUrl('whoami', '/hello?x=1'));
  await expect(page).toHaveURL(/\/sign-in\?rd=/);
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  await page.locator('input[name="login"]').fill('alice@example.com');
  await page.locator('input[name="password"]').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(appUrl('whoami', '/hello?x=1'));
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
  await expect(page.getByText('Assertion verified')).toBeVisible();

  // The app host has its own host-only cookie; the portal cookie never reaches the app.
  const cookies = await page.context().cookies(appUrl('whoami'));
  expect(cookies.find((cookie) => cookie.name === 'gatehouse_app')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  // Requests made by the page itself (the browser resolves *.localhost; Node does not).
  const getJson = (headers: Record<string, string> = {}) =>
    page.evaluate(async (init) => (await fetch('/?format=json', { headers: init })).json() as Promise<WhoamiJson>, headers);
  const json = await getJson();
  expect(json.identity.email).toBe('alice@example.com');
  expect(String(json.headers.cookie ?? '')).not.toMatch(/gatehouse_/);

  // Spoofed identity headers, in any spelling, never reach the app.
  const spoofed = await getJson({ 'X-Gatehouse-Email': 'evil@example.com', 'x-gatehouse-groups': 'admins', 'X-Gatehouse_User': 'evil' });
  expect(spoofed.identity.email).toBe('alice@example.com');
  expect(JSON.stringify(spoofed.headers)).not.toContain('evil');

  // The launcher on the portal lists both apps for alice.
  await page.goto(portalUrl());
  await expect(page.getByRole('link', { name: /Whoami/ })).toBeVisible();
  await expect(page.getByRole('link', { name: /Admin demo/ })).toBeVisible();
});

test('bob may open whoami but is denied the admins-only app, with a clear page', async ({ page }) => {
  await openAs(page, appUrl('whoami'), 'bob@example.com', 'bob');
  await expect(page.getByText('bob@example.com').first()).toBeVisible();

  // The handshake passes through the portal first (bob is signed in there), then the app says no.
  await page.goto(appUrl('admin-demo', '/secret'));
  await expect(page).toHaveURL(appUrl('admin-demo', '/secret'));
  await expect(page.getByRole('heading', { name: 'Access denied' })).toBeVisible();
  await expect(page.getByText('You are signed in as bob@example.com, who may not open Admin demo.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Switch account' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back to your apps' })).toHaveAttribute('href', `${portalUrl()}/`);
  await expect(page.getByText('If you should have access, ask an administrator.')).toBeVisible();
  await expectAccessible(page);

  // His Recent activity names the app he was denied, and nothing of the rule that denied him.
  await page.goto(`${portalUrl()}/account`);
  const activity = page.getByRole('region', { name: 'Recent activity' });
  await expect(activity.locator('li[data-type="access_denied"]').first()).toContainText('Denied access to Admin demo');
  await expect(activity).not.toContainText('allow[');
  await expect(activity).not.toContainText('admins');
  await page.goto(appUrl('admin-demo', '/secret'));
  await expect(page.getByRole('heading', { name: 'Access denied' })).toBeVisible();

  // Sign out from the denied page ends the session everywhere.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/signed-out$/);
  expect((await page.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
});

test('"Switch account" on the denied page lets bob sign in as alice instead of looping back to bob', async ({ page }, testInfo) => {
  await openAs(page, appUrl('admin-demo', '/secret'), 'bob@example.com', 'bob');
  await expect(page.getByRole('heading', { name: 'Access denied' })).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('denied.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath('denied-phone.png'), fullPage: true });
  await expectAccessible(page);
  await page.setViewportSize({ width: 1280, height: 800 });

  // Bob's Gatehouse session ends; the sign-in page does not say "already signed in as bob".
  await page.getByRole('button', { name: 'Switch account' }).click();
  await expect(page).toHaveURL(/\/sign-in\?rd=/);
  expect((await page.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
  await expect(page.getByText('You are already signed in')).toHaveCount(0);

  // The IdP still has bob's session, but is asked to let the person choose: its login form, not bob again.
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  await expect(page.locator('input[name="login"]')).toBeVisible();
  await page.locator('input[name="login"]').fill('alice@example.com');
  await page.locator('input[name="password"]').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(appUrl('admin-demo', '/secret'));
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
});

test('WebSocket echo through the proxy carries the identity', async ({ page }) => {
  await openAs(page, appUrl('whoami'), 'alice@example.com', 'alice');
  const echoed = await page.evaluate(
    (url) =>
      new Promise<string>((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.onopen = () => socket.send('hello');
        socket.onmessage = (event) => {
          resolve(String(event.data));
          socket.close();
        };
        socket.onclose = (event) => reject(new Error(`WebSocket closed: ${event.code} ${event.reason}`));
      }),
    appUrl('whoami', '/ws').replace('http:', 'ws:'),
  );
  expect(echoed).toBe('echo from alice@example.com: hello');
});
