import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { startExtraIdp, type ExtraIdp } from './support/devIdp.js';
import { completeIdpLogin, expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The console's Providers area against the real stack: the config providers (Development IdP, Partner
 * IdP) are read-only; alice adds a third IdP by its issuer URL (seeing its discovery document before
 * saving), which stays hidden from people until a test sign-in with it passed (a test that creates
 * nothing), reads unavailable on the sign-in page while its IdP is down, turns it off (it leaves the
 * sign-in page at once) and deletes it. The client secret is never shown again after it is typed.
 */

const SECRET = 'gatehouse-dev-secret';
const adminNav = (page: Page) => page.getByRole('navigation', { name: 'Admin' });
const providersTable = (page: Page) => page.getByTestId('providers-table');
const providerRow = (page: Page, id: string) => providersTable(page).locator(`tr[data-provider-id="${id}"]`);

let corp: ExtraIdp;

test.beforeAll(async () => {
  // The IdP's admin registered Gatehouse with the redirect URI the console shows for the id "corp".
  corp = await startExtraIdp({
    name: 'Corp IdP',
    cookiePrefix: 'corpidp',
    redirectUris: [`${portalUrl()}/.gatehouse/callback/corp`],
    postLogoutRedirectUris: [`${portalUrl()}/signed-out`],
  });
});
test.afterAll(async () => {
  await corp?.stop();
});

/** axe in light and dark, with a full-page screenshot of each into the test's output folder. */
async function checkBothSchemes(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectAccessible(page);
    await page.screenshot({ path: testInfo.outputPath(`${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function usersNamed(page: Page, email: string): Promise<number> {
  const response = await page.request.get(`${portalUrl()}/api/admin/users?query=${encodeURIComponent(email)}`);
  return ((await response.json()) as { total: number }).total;
}

async function offeredOnSignInPage(page: Page): Promise<string[]> {
  const response = await page.request.get(`${portalUrl()}/api/providers`);
  return ((await response.json()) as { providers: Array<{ name: string }> }).providers.map((provider) => provider.name);
}

async function availabilityOnSignInPage(page: Page, name: string): Promise<string | undefined> {
  const response = await page.request.get(`${portalUrl()}/api/providers`);
  return ((await response.json()) as { providers: Array<{ name: string; availability: string }> }).providers.find((provider) => provider.name === name)?.availability;
}

test('alice adds a provider by its issuer, tests its sign-in, turns it off and deletes it', async ({ browser }, testInfo) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account`);

  // The list: the config providers, read-only, and who may sign in.
  await page.goto(`${portalUrl()}/admin`);
  await adminNav(page).getByRole('link', { name: 'Providers' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers`);
  await expect(page.getByRole('heading', { level: 1, name: 'Providers' })).toBeVisible();
  await expect(adminNav(page).getByRole('link', { name: 'Providers' })).toHaveAttribute('aria-current', 'page');
  for (const id of ['dev', 'partner']) {
    await expect(providerRow(page, id)).toContainText('From gatehouse.yaml');
    await expect(providerRow(page, id)).toContainText('Ready');
  }
  await expect(page.getByRole('region', { name: 'Who may sign in' })).toBeVisible();
  await expect(page.getByRole('switch', { name: 'Create users on first sign-in' })).toBeChecked();
  await checkBothSchemes(page, testInfo, 'providers-list');

  // A config provider opens read-only, with its redirect URI to copy.
  await providerRow(page, 'dev').getByRole('link', { name: 'Development IdP', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Development IdP' })).toBeVisible();
  const summary = page.getByTestId('config-summary');
  await expect(summary.getByRole('heading', { level: 2 })).toHaveText(/^Defined in \/.+\/gatehouse\.yaml$/);
  await expect(summary).toContainText('Set in the configuration (not shown)');
  await expect(page.getByRole('textbox', { name: 'Client ID' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await expect(page.getByTestId('register-at-provider')).toContainText(`${portalUrl()}/.gatehouse/callback/dev`);
  expect(await page.content()).not.toContain(SECRET);

  // A new provider: first the issuer, and its discovery document, before anything can be saved.
  await adminNav(page).getByRole('link', { name: 'Providers' }).click();
  await page.getByRole('link', { name: 'New provider' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers/new`);
  // Any OpenID Connect provider: the generic kind, found by its issuer.
  // (A click, then the state: choosing navigates to ?kind=, so the radio turns checked a moment later.)
  await page.getByRole('radio', { name: 'OpenID Connect' }).click();
  await expect(page.getByRole('radio', { name: 'OpenID Connect' })).toHaveAttribute('aria-checked', 'true');
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers/new?kind=oidc`);
  await expect(page.getByRole('button', { name: 'Create provider' })).toHaveCount(0);
  // The demo app answers, but it is no OpenID Connect issuer.
  await page.getByRole('textbox', { name: 'Issuer URL' }).fill(process.env.DEMO_APP_URL!);
  await page.getByRole('button', { name: 'Fetch discovery' }).click();
  await expect(page.getByRole('alert')).toContainText('No usable discovery document');
  await expect(page.getByRole('alert')).toContainText('is not a usable OpenID Connect issuer');
  await expect(page.getByRole('button', { name: 'Create provider' })).toHaveCount(0);
  await page.getByRole('textbox', { name: 'Issuer URL' }).fill(corp.issuer);
  await page.getByRole('button', { name: 'Fetch discovery' }).click();
  const preview = page.getByTestId('discovery-preview');
  await expect(preview).toContainText('OpenID Connect provider found');
  await expect(preview).toContainText('Yes (S256)');
  await expect(preview).toContainText('Supported (used)');
  await expect(preview).toContainText(`${corp.issuer}/token`);

  await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Corp IdP');
  // The id follows the name, and the redirect URI follows the id.
  await expect(page.getByRole('textbox', { name: 'Id', exact: true })).toHaveValue('corp-idp');
  await expect(page.getByTestId('register-at-provider')).toContainText(`${portalUrl()}/.gatehouse/callback/corp-idp`);
  await page.getByRole('textbox', { name: 'Id', exact: true }).fill('corp');
  await expect(page.getByTestId('register-at-provider')).toContainText(`${portalUrl()}/.gatehouse/callback/corp`);
  await page.getByRole('textbox', { name: 'Client ID' }).fill('gatehouse');
  await page.getByLabel('Client secret').fill(SECRET);
  await expect(page.getByRole('textbox', { name: 'Scopes' })).toHaveValue('openid email profile groups offline_access');
  await page.getByRole('switch', { name: 'Create users on first sign-in' }).check();
  // A provider's groups count for nothing until an admin trusts them (or gives them a prefix).
  await expect(page.getByRole('switch', { name: "Trust this provider's groups" })).not.toBeChecked();
  await page.getByRole('textbox', { name: 'Group prefix' }).fill('corp:');
  await page.getByRole('button', { name: 'Advanced: claim mapping and request options' }).click();
  await expect(page.getByRole('textbox', { name: 'Groups claim' })).toHaveValue('groups');
  await checkBothSchemes(page, testInfo, 'provider-new');
  // An id another provider has (here one from gatehouse.yaml): the server's 409, said beside the id.
  await page.getByRole('textbox', { name: 'Id', exact: true }).fill('dev');
  await page.getByRole('button', { name: 'Create provider' }).click();
  await expect(page.getByRole('textbox', { name: 'Id', exact: true })).toHaveAccessibleDescription(/A provider in the configuration file already has the id "dev"\. Choose another\./);
  await expect(page.getByRole('alert').filter({ hasText: 'Fix the field marked below.' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Id', exact: true }).fill('corp');
  await page.getByRole('button', { name: 'Create provider' }).click();

  // Saved: its own page, hidden from people until a test sign-in passes; the secret is write-only.
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers/corp`);
  await expect(page.getByRole('heading', { level: 1, name: 'Corp IdP' })).toBeVisible();
  await expect(page.getByLabel('Client secret')).toHaveValue('');
  await expect(page.getByText('A secret is set — leave empty to keep it.')).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Group prefix' })).toHaveValue('corp:');
  expect(await page.content()).not.toContain(SECRET);
  // Threat: a provider that never worked offered to everyone, who would all end on its error.
  await expect(page.getByTestId('publication-badge')).toHaveText('Hidden — not tested yet');
  await expect(page.getByTestId('provider-hidden')).toContainText('Nobody sees Corp IdP on the sign-in or account page until a test sign-in with it passes');
  expect(await offeredOnSignInPage(page)).toEqual(['Development IdP', 'Partner IdP']);
  const listed = await page.request.get(`${portalUrl()}/api/admin/providers`);
  expect(await listed.text()).not.toContain(SECRET);
  await expect(page.getByText('Ready', { exact: true })).toBeVisible();
  await checkBothSchemes(page, testInfo, 'provider-edit');

  // Publishing it untested asks first, saying it was never tested; cancelled here.
  await page.getByRole('button', { name: 'Publish without testing…' }).click();
  const publishing = page.getByRole('dialog', { name: 'Publish Corp IdP untested?' });
  await expect(publishing).toContainText('No test sign-in with Corp IdP has passed');
  await checkBothSchemes(page, testInfo, 'provider-publish-untested');
  await publishing.getByRole('button', { name: 'Cancel' }).click();
  await expect(publishing).toBeHidden();
  expect(await offeredOnSignInPage(page)).toEqual(['Development IdP', 'Partner IdP']);

  // A test sign-in in this tab: carol at the Corp IdP; nothing is created, the result says what would happen.
  const carolsBefore = await usersNamed(page, 'carol@partner.example');
  await page.getByRole('button', { name: 'Test sign-in to publish' }).click();
  await completeIdpLogin(page, 'carol@partner.example', 'carol');
  await expect(page).toHaveURL(new RegExp(`^${portalUrl()}/admin/providers/corp/tests/[\\w-]+$`));
  await expect(page.getByRole('heading', { level: 1, name: 'Test sign-in with Corp IdP' })).toBeVisible();
  const result = page.getByTestId('provider-test-result');
  await expect(result).toHaveAttribute('data-result', 'create');
  await expect(result).toContainText('Would sign in as a new user');
  await expect(result).toContainText('carol@partner.example');
  await expect(result).toContainText('Nothing was created');
  await expect(result).toContainText('partners');
  await checkBothSchemes(page, testInfo, 'provider-test-result');
  expect(await usersNamed(page, 'carol@partner.example')).toBe(carolsBefore);
  // alice is still herself: the test did not touch her session.
  expect((await (await page.request.get(`${portalUrl()}/api/session`)).json()).user.email).toBe('alice@example.com');

  // A test result's address for a provider that does not exist offers no "Test again" into a 404.
  const testUrl = page.url();
  await page.goto(`${portalUrl()}/admin/providers/no-such-idp/tests/nothing`);
  await expect(page.getByText('There is no provider “no-such-idp”')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Test again' })).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Test again' })).toHaveCount(0);
  await expectAccessible(page);
  await page.goto(testUrl);
  await expect(page.getByTestId('provider-test-result')).toBeVisible();

  // The passing test published it: offered to people from now on.
  await page.getByRole('link', { name: 'Back to Corp IdP' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Corp IdP' })).toBeVisible();
  await expect(page.getByTestId('publication-badge')).toHaveText('Published');
  await expect(page.getByTestId('provider-hidden')).toHaveCount(0);
  expect(await offeredOnSignInPage(page)).toEqual(['Development IdP', 'Partner IdP', 'Corp IdP']);
  await adminNav(page).getByRole('link', { name: 'Providers' }).click();
  await expect(providerRow(page, 'corp').getByTestId('publication-badge')).toHaveText('Published');
  await checkBothSchemes(page, testInfo, 'providers-list-published');
  await providerRow(page, 'corp').getByRole('link', { name: 'Corp IdP', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Corp IdP' })).toBeVisible();

  // Its IdP goes down: the sign-in page still shows it, as unavailable right now, not as a link to an error.
  await corp.stop();
  await expect.poll(() => availabilityOnSignInPage(page, 'Corp IdP'), { timeout: 15_000 }).toBe('unavailable');
  const visitorDownContext = await browser.newContext();
  const visitorDown = await visitorDownContext.newPage();
  await visitorDown.goto(`${portalUrl()}/sign-in`);
  await expect(visitorDown.getByRole('button', { name: 'Sign in with Corp IdP' })).toBeDisabled();
  await expect(visitorDown.getByText('Corp IdP is unavailable right now. Try again in a minute.')).toBeVisible();
  await expect(visitorDown.getByRole('link', { name: 'Sign in with Development IdP' })).toBeVisible();
  await expectAccessible(visitorDown);
  await visitorDown.screenshot({ path: testInfo.outputPath('sign-in-provider-unavailable.png'), fullPage: true });
  await visitorDown.setViewportSize({ width: 390, height: 844 });
  await expectAccessible(visitorDown);
  await visitorDown.screenshot({ path: testInfo.outputPath('sign-in-provider-unavailable-phone.png'), fullPage: true });
  await visitorDownContext.close();

  // Turned off, after confirming: gone from the sign-in page at once.
  await page.getByRole('switch', { name: 'Offered on the sign-in page' }).click();
  const dialog = page.getByRole('dialog', { name: 'Turn off Corp IdP?' });
  await dialog.getByRole('button', { name: 'Turn off' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole('switch', { name: 'Offered on the sign-in page' })).not.toBeChecked();
  await expect(page.getByText('Off', { exact: true })).toBeVisible();
  const visitor = await browser.newPage();
  await visitor.goto(`${portalUrl()}/sign-in`);
  await expect(visitor.getByRole('link', { name: 'Sign in with Development IdP' }).or(visitor.getByRole('button', { name: 'Sign in with Development IdP' }))).toBeVisible();
  await expect(visitor.getByText('Sign in with Corp IdP')).toHaveCount(0);
  await visitor.close();

  // Deleted (nobody has signed in with it), after confirming.
  await page.getByRole('button', { name: 'Delete provider' }).click();
  const deleting = page.getByRole('dialog', { name: 'Delete Corp IdP?' });
  await deleting.getByRole('button', { name: 'Delete' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/providers`);
  await expect(providerRow(page, 'dev')).toBeVisible();
  await expect(providerRow(page, 'corp')).toHaveCount(0);
  expect(await page.content()).not.toContain(SECRET);

  // Every change is in the audit log.
  await adminNav(page).getByRole('link', { name: 'Audit log' }).click();
  for (const label of ['Provider added', 'Provider tested', 'Provider published', 'Provider turned off', 'Provider deleted']) {
    await expect(page.getByText(label, { exact: true }).first()).toBeVisible();
  }

  // Signed out, so later specs on the same stack see no extra sessions of hers.
  await page.goto(`${portalUrl()}/account`);
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await context.close();
});

test('alice reloads gatehouse.yaml from the Providers page and is told what changed', async ({ browser }, testInfo) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  await page.goto(`${portalUrl()}/admin/providers`);
  await page.getByRole('button', { name: 'Reload configuration' }).click();
  // The file is the one the stack started with: nothing to apply, and it says so.
  await expect(page.getByRole('alert').filter({ hasText: 'Nothing to reload' })).toBeVisible();
  await checkBothSchemes(page, testInfo, 'providers-reloaded');
  const ready = (await (await page.request.get(`${portalUrl()}/readyz`)).json()) as { checks: { config: { lastReload: { outcome: string } | null } } };
  expect(ready.checks.config.lastReload?.outcome).toBe('unchanged');
  await context.close();
});
