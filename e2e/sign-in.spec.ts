import { expect, test } from '@playwright/test';
import { expectAccessible, portalUrl, signInWithDevIdp } from './support/fixtures.js';

test('alice signs in, sees her account, signs out; then bob signs in', async ({ page, context }) => {
  // Signed out, the portal sends people to sign in.
  await page.goto(portalUrl());
  await expect(page).toHaveURL(/\/sign-in/);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expectAccessible(page);

  await signInWithDevIdp(page, 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  await expect(page.getByText('Alice Example').first()).toBeVisible();
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
  await expect(page.getByText('Development IdP').first()).toBeVisible();
  await expect(page.getByText('admins', { exact: true })).toBeVisible();
  await expect(page.getByText('staff', { exact: true })).toBeVisible();
  await expectAccessible(page);

  const session = (await context.cookies(portalUrl())).find((cookie) => cookie.name === 'gatehouse_session');
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

  const me = await page.request.get(`${portalUrl()}/api/session`);
  expect(me.status()).toBe(200);
  const body = await me.json();
  expect(body.user).toMatchObject({ email: 'alice@example.com', name: 'Alice Example', groups: ['staff', 'admins'] });
  expect(JSON.stringify(body)).not.toContain(session!.value);

  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await expectAccessible(page);
  expect((await page.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);

  // The old cookie value is dead even if replayed.
  const replay = await fetch(`${portalUrl()}/api/session`, { headers: { cookie: `gatehouse_session=${session!.value}` } });
  expect(replay.status).toBe(401);

  // The IdP session ended too (RP-initiated logout), so bob can sign in on the same browser.
  await signInWithDevIdp(page, 'bob@example.com', 'bob');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  await expect(page.getByText('Bob Example').first()).toBeVisible();
  await expect(page.getByText('staff', { exact: true })).toBeVisible();
  await expect(page.getByText('admins', { exact: true })).toHaveCount(0);
});

test('a wrong password stays on the IdP form with a message', async ({ page }) => {
  await signInWithDevIdp(page, 'alice@example.com', 'not-her-password');
  await expect(page.getByText('Invalid email or password')).toBeVisible();
  await expect(page.locator('input[name="password"]')).toBeVisible();
  expect(new URL(page.url()).origin).toBe(process.env.DEV_IDP_URL);
});

test('unknown pages are a 404 page, unknown API routes problem+json', async ({ page }) => {
  const response = await page.goto(`${portalUrl()}/no/such/page`);
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  const api = await page.request.get(`${portalUrl()}/api/nope`);
  expect(api.status()).toBe(404);
  expect(api.headers()['content-type']).toMatch(/^application\/problem\+json/);
});
