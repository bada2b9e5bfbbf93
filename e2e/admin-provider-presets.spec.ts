import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { startExtraIdp, type ExtraIdp } from './support/devIdp.js';
import { completeIdpLogin, expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * "Add provider" from a preset: alice picks Google among the kinds, sees the redirect URI to register
 * and the setup guide, fills the form, and a person signs in with the new provider. Google cannot be
 * reached from here: a development IdP on loopback stands in for it (Google's form lets a loopback
 * issuer replace Google's, for exactly this).
 */
let google: ExtraIdp;

test.beforeAll(async () => {
  google = await startExtraIdp({
    name: 'Google stand-in',
    cookiePrefix: 'googlestandin',
    redirectUris: [`${portalUrl()}/.gatehouse/callback/google`],
    postLogoutRedirectUris: [`${portalUrl()}/signed-out`],
    // Someone no other spec knows, so creating their user changes nothing the others count on.
    people: [{ login: 'pat@gmail-standin.example', password: 'pat', name: 'Pat Standin' }],
  });
});
test.afterAll(async () => {
  await google?.stop();
});

/** axe, and a full-page screenshot into the test's output folder. */
async function check(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await expectAccessible(page);
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

test('alice adds Google from its preset, and a person signs in with it', async ({ browser }, testInfo) => {
  const page = await (await browser.newContext()).newPage();
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await page.goto(`${portalUrl()}/admin/providers/new`);

  // The kinds, as the server's presets list them: a radio group of cards, each with its logo.
  const kinds = page.getByRole('radiogroup', { name: 'Kind of provider' });
  await expect(kinds.getByRole('radio')).toHaveCount(8);
  for (const kind of ['oidc', 'google', 'entra', 'okta', 'keycloak', 'auth0', 'gitlab', 'github']) {
    await expect(kinds.locator(`[data-kind="${kind}"] svg[data-logo="${kind}"]`)).toHaveCount(1);
  }
  for (const label of ['OpenID Connect', 'Google', 'Microsoft Entra ID', 'Okta', 'Keycloak', 'Auth0', 'GitLab', 'GitHub']) {
    await expect(kinds.getByRole('radio', { name: label })).toBeVisible();
  }
  await check(page, testInfo, 'presets-light');
  await page.setViewportSize({ width: 390, height: 844 });
  await check(page, testInfo, 'presets-phone');
  await page.setViewportSize({ width: 1280, height: 800 });

  // (A click, then the state: choosing navigates to ?kind=, so the radio turns checked a moment later.)
  await kinds.getByRole('radio', { name: 'Google' }).click();
  await expect(kinds.getByRole('radio', { name: 'Google' })).toHaveAttribute('aria-checked', 'true');
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers/new?kind=google`);
  // Google's own settings and setup guide; no issuer to fetch.
  await expect(page.getByRole('region', { name: 'Google settings' })).toBeVisible();
  // The setup guide is a link: Gatehouse serves its documentation to admins.
  const guide = page.getByRole('link', { name: 'How to register Gatehouse at Google' });
  await expect(guide).toHaveAttribute('href', '/docs/providers/google.md');
  const guideText = await page.request.get(`${portalUrl()}/docs/providers/google.md`);
  expect(guideText.status()).toBe(200);
  expect(await guideText.text()).toMatch(/^# .*Google/);
  await expect(page.getByRole('textbox', { name: 'Google Workspace domains' })).toHaveValue('');
  await expect(page.getByRole('button', { name: 'Fetch discovery' })).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'Name', exact: true })).toHaveValue('Google');
  await expect(page.getByRole('textbox', { name: 'Id', exact: true })).toHaveValue('google');
  // The exact redirect URI to register at Google, with the id in it.
  await expect(page.getByTestId('register-at-provider')).toContainText(`${portalUrl()}/.gatehouse/callback/google`);
  await expect(page.getByRole('textbox', { name: 'Scopes' })).toHaveValue('openid email profile');

  await page.getByRole('textbox', { name: 'Client ID' }).fill('gatehouse');
  await page.getByLabel('Client secret').fill('gatehouse-dev-secret');
  await page.getByRole('switch', { name: 'Create users on first sign-in' }).check();
  await page.getByRole('button', { name: 'Advanced: claim mapping and request options' }).click();
  await page.getByRole('textbox', { name: 'Issuer URL' }).fill(google.issuer);
  await check(page, testInfo, 'google-form-light');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: testInfo.outputPath('google-form-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole('button', { name: 'Create provider' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers/google`);
  await expect(page.getByRole('heading', { level: 1, name: 'Google' })).toBeVisible();
  // Editing keeps its kind: Google's settings, not the generic issuer field.
  await expect(page.getByRole('region', { name: 'Google settings' })).toBeVisible();

  // Hidden from people until a test sign-in passes; alice's test (as pat) publishes it.
  await expect(page.getByTestId('publication-badge')).toHaveText('Hidden — not tested yet');
  await page.getByRole('button', { name: 'Test sign-in to publish' }).click();
  await completeIdpLogin(page, 'pat@gmail-standin.example', 'pat');
  await expect(page).toHaveURL(new RegExp(`^${portalUrl()}/admin/providers/google/tests/[\\w-]+$`));
  await expect(page.getByTestId('provider-test-result')).toHaveAttribute('data-result', 'create');
  await page.getByRole('link', { name: 'Back to Google' }).click();
  await expect(page.getByTestId('publication-badge')).toHaveText('Published');

  // A person signs in with it (pat, at the stand-in).
  const person = await (await browser.newContext()).newPage();
  await person.goto(`${portalUrl()}/sign-in`);
  await person.getByRole('link', { name: 'Sign in with Google' }).or(person.getByRole('button', { name: 'Sign in with Google' })).click();
  await completeIdpLogin(person, 'pat@gmail-standin.example', 'pat');
  const session = (await (await person.request.get(`${portalUrl()}/api/session`)).json()) as { session: { provider: { id: string } } };
  expect(session.session.provider.id).toBe('google');

  // Turned off again (people signed in with it, so it stays): the other specs' sign-in page is as it was.
  const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
  const off = await page.request.post(`${portalUrl()}/api/admin/providers/google/disable`, { headers: { origin: portalUrl(), 'x-csrf-token': csrf } });
  expect(off.ok()).toBe(true);
});
