import { expect, test, type Page } from '@playwright/test';
import { startExtraIdp, type ExtraIdp } from './support/devIdp.js';
import { completeIdpLogin, expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * Two journeys that used to end in a false message. Opening the portal at another loopback name
 * (http://127.0.0.1:<port> for http://localhost:<port>) ended every sign-in in "Sign-in expired"; an
 * unknown *.localhost showed the portal. And a provider registered wrongly at its IdP (a wrong client
 * secret, a redirect URI the IdP does not know) was reported as "could not reach the provider".
 */

const portalPort = () => new URL(portalUrl()).port;

test('the portal opened at 127.0.0.1 is sent to publicUrl before a sign-in starts, and the sign-in works', async ({ page }) => {
  await page.goto(`http://127.0.0.1:${portalPort()}/account`);
  // Sent to the same path at publicUrl, then to sign in there.
  await expect(page).toHaveURL(new RegExp(`^${portalUrl()}/sign-in`));
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  await completeIdpLogin(page, 'bob@example.com', 'bob');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  await expect(page.getByText('bob@example.com').first()).toBeVisible();
});

test('an unknown host gets a page saying so, with the way to the portal', async ({ page }, testInfo) => {
  const response = await page.goto(`http://unknown.localhost:${portalPort()}/sign-in`);
  expect(response?.status()).toBe(421);
  await expect(page.getByRole('heading', { name: 'Not an address of this site' })).toBeVisible();
  await expect(page.getByText(`Gatehouse does not answer at this address. Open ${portalUrl()}/ instead.`)).toBeVisible();
  await expect(page.getByText(/Reference [0-9a-f]{12}/)).toBeVisible();
  await expectAccessible(page);
  await page.screenshot({ path: testInfo.outputPath('unknown-host.png'), fullPage: true });
  await page.getByRole('link', { name: 'Go to Gatehouse' }).click();
  await expect(page).toHaveURL(new RegExp(`^${portalUrl()}/sign-in`));
});

test.describe('a provider registered wrongly at its IdP', () => {
  let idp: ExtraIdp;
  test.beforeAll(async () => {
    // Gatehouse is registered there with the redirect URI of "wrong-secret" only.
    idp = await startExtraIdp({ name: 'Wrong IdP', cookiePrefix: 'wrongidp', redirectUris: [`${portalUrl()}/.gatehouse/callback/wrong-secret`], postLogoutRedirectUris: [] });
  });
  test.afterAll(async () => {
    await idp?.stop();
  });

  async function addProvider(page: Page, id: string, clientSecret: string): Promise<void> {
    const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
    const created = await page.request.post(`${portalUrl()}/api/admin/providers`, {
      headers: { 'x-csrf-token': csrf, origin: portalUrl() },
      data: { kind: 'oidc', id, name: `Misconfigured ${id}`, issuer: idp.issuer, clientId: 'gatehouse', clientSecret, scopes: ['openid', 'email', 'profile'], createUsers: true },
    });
    expect(created.status(), await created.text()).toBe(201);
  }

  test("the console's test sign-in names the fix; a person is told to tell an administrator", async ({ page }, testInfo) => {
    await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
    await addProvider(page, 'wrong-secret', 'not-the-registered-secret');
    await addProvider(page, 'unregistered', 'gatehouse-dev-secret');

    // A wrong client secret: the IdP's PAR endpoint says invalid_client.
    await page.goto(`${portalUrl()}/admin/providers/wrong-secret`);
    await page.getByRole('button', { name: 'Test sign-in', exact: true }).click();
    const result = page.getByTestId('provider-test-result');
    await expect(result).toHaveAttribute('data-result', 'failed');
    await expect(result).toContainText('The provider is not set up correctly');
    await expect(result).toContainText('Check the client secret');
    await expect(result).not.toContainText("couldn't reach");
    await expectAccessible(page);
    await page.screenshot({ path: testInfo.outputPath('test-wrong-secret.png'), fullPage: true });

    // A redirect URI the IdP does not know: the exact one to register.
    await page.goto(`${portalUrl()}/admin/providers/unregistered`);
    await page.getByRole('button', { name: 'Test sign-in', exact: true }).click();
    await expect(result).toContainText(`Register ${portalUrl()}/.gatehouse/callback/unregistered exactly as a redirect URI`);
    await page.screenshot({ path: testInfo.outputPath('test-unregistered.png'), fullPage: true });

    // A failed test does not publish it; an admin who publishes it anyway, knowingly, exposes people to it.
    await page.goto(`${portalUrl()}/admin/providers/wrong-secret`);
    await page.getByRole('button', { name: 'Publish without testing…' }).click();
    await page.getByRole('dialog', { name: 'Publish Misconfigured wrong-secret untested?' }).getByRole('button', { name: 'Publish untested' }).click();
    await expect(page.getByTestId('publication-badge')).toHaveText('Published');

    // A person who tries it reads that it is misconfigured, not how to fix it.
    const response = await page.goto(`${portalUrl()}/.gatehouse/sign-in/wrong-secret`);
    expect(response?.status()).toBe(502);
    await expect(page.getByText(/is not set up correctly for this site.*Tell your administrator/)).toBeVisible();
    await expect(page.getByText('client secret')).toHaveCount(0);
    await expectAccessible(page);
    await page.screenshot({ path: testInfo.outputPath('person-misconfigured.png'), fullPage: true });

    for (const id of ['wrong-secret', 'unregistered']) {
      const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
      await page.request.delete(`${portalUrl()}/api/admin/providers/${id}`, { headers: { 'x-csrf-token': csrf, origin: portalUrl() } });
    }
  });
});
