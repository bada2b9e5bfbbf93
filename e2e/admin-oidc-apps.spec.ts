import { expect, test, type Page } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * An app that signs people in with OpenID Connect, made in the console against the real stack: alice
 * (an admin) creates an OpenID-Connect-only app, creates its client secret, sees it once, and the app's
 * page shows what to paste into the app. Screens at a laptop's and a phone's size, each checked with axe.
 */

const appsTable = (page: Page) => page.getByTestId('apps-table');

async function screens(page: Page, name: string): Promise<void> {
  for (const [width, height] of [
    [1280, 800],
    [375, 740],
  ] as const) {
    await page.setViewportSize({ width, height });
    await expectAccessible(page);
    await page.screenshot({ path: test.info().outputPath(`${name}-${width}x${height}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('alice creates an app that signs people in with OpenID Connect alone, makes its secret (shown once), and sees what to paste', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account`);

  await page.goto(`${portalUrl()}/admin/apps/new`);
  await expect(page.getByRole('heading', { level: 1, name: 'New app' })).toBeVisible();
  const protection = page.getByRole('region', { name: 'How is this app protected?' });
  await protection.getByRole('checkbox', { name: 'Gatehouse guards its host' }).uncheck();
  await expect(page.getByRole('textbox', { name: 'Upstream' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Proxy options' })).toHaveCount(0);
  // Neither: said beside the choice, in words.
  await page.getByRole('textbox', { name: 'Id' }).fill('grafana-sso');
  await page.getByRole('textbox', { name: 'Name' }).fill('Grafana');
  await page.getByRole('textbox', { name: 'Public URL' }).fill('https://grafana.example.com');
  await page.getByRole('button', { name: 'Add allow rule' }).click();
  const rule = page.getByRole('group', { name: 'Allow rule 1' });
  await rule.getByRole('combobox', { name: 'Kind' }).click();
  await page.getByRole('option', { name: 'Any signed-in user', exact: true }).click();
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(protection.getByRole('alert')).toContainText('Choose at least one');

  await protection.getByRole('checkbox', { name: 'Signs people in with OpenID Connect' }).check();
  const redirects = page.getByRole('textbox', { name: 'Redirect URIs', exact: true });
  await expect(page.getByRole('textbox', { name: 'Client ID' })).toHaveAttribute('placeholder', 'grafana-sso');
  // A redirect URI the contract refuses: said beside the field, by its line, before the server is asked.
  await redirects.fill('https://grafana.example.com/login/generic_oauth\nhttp://grafana.example.com/login/generic_oauth');
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(redirects).toHaveAccessibleDescription(/Line 2: must use https/);
  await redirects.fill('https://grafana.example.com/login/generic_oauth');
  await page.getByRole('textbox', { name: 'Post-logout redirect URIs' }).fill('https://grafana.example.com/login');
  await screens(page, 'oidc-app-form');
  await page.getByRole('button', { name: 'Create app' }).click();

  // Its page: what to paste into the app.
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps/grafana-sso`);
  const setup = page.getByTestId('oidc-setup');
  await expect(setup).toBeVisible();
  await expect(setup.getByTestId('copy-issuer')).toHaveText(portalUrl());
  await expect(setup.getByTestId('copy-discovery-url')).toHaveText(`${portalUrl()}/.well-known/openid-configuration`);
  await expect(setup.getByTestId('copy-client-id')).toHaveText('grafana-sso');
  await expect(setup.getByTestId('copy-redirect-uri')).toHaveText('https://grafana.example.com/login/generic_oauth');
  await expect(setup.getByTestId('copy-scopes')).toHaveText('openid profile email groups');
  await expect(setup).toContainText('client_secret_basic');
  // The saved lifetimes read back as saved (a regression: they came back a thousand times longer).
  await expect(page.getByRole('textbox', { name: 'Access token lifetime' })).toHaveValue('10m');
  await expect(page.getByRole('textbox', { name: 'Refresh token lifetime' })).toHaveValue('14d');
  // Not a guarded host: no proxy configuration to show.
  await expect(page.getByRole('region', { name: 'Behind nginx, Caddy or Traefik' })).toHaveCount(0);
  // The Grafana recipe, filled in from the shipped file.
  const grafana = setup.getByRole('region', { name: 'The [auth.generic_oauth] section of grafana.ini' });
  await expect(grafana).toContainText('client_id = grafana-sso');
  await expect(grafana).toContainText(`auth_url = ${portalUrl()}/oidc/authorize`);
  await expect(setup).toContainText('No secret yet');

  // A secret: shown once, in a dialog with Copy and a warning.
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await setup.getByRole('button', { name: 'Create a secret' }).click();
  const dialog = page.getByRole('dialog', { name: 'Copy the client secret now' });
  await expect(dialog).toContainText('Shown this once');
  const secret = (await dialog.getByTestId('new-client-secret').textContent())?.trim() ?? '';
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  await dialog.getByRole('button', { name: 'Copy' }).click();
  await expect(dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(String(await page.evaluate('navigator.clipboard.readText()'))).toBe(secret);
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('oidc-secret-dialog.png') });
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(dialog).toHaveCount(0);
  // Listed by its first characters only; the secret itself is nowhere on the page any more, nor after a reload.
  await expect(setup.getByTestId('client-secret')).toHaveCount(1);
  await expect(setup.getByTestId('client-secret')).toContainText(`${secret.slice(0, 4)}…`);
  await expect(setup.getByTestId('client-secret')).toContainText('alice@example.com');
  expect(await page.content()).not.toContain(secret);
  await page.reload();
  await expect(page.getByTestId('client-secret')).toHaveCount(1);
  expect(await page.content()).not.toContain(secret);
  await screens(page, 'oidc-app-page');

  // A second (rotation), then no third until one is revoked.
  await page.getByTestId('oidc-setup').getByRole('button', { name: 'Create a secret' }).click();
  await page.getByRole('dialog', { name: 'Copy the client secret now' }).getByRole('button', { name: 'Done' }).click();
  await expect(page.getByTestId('client-secret')).toHaveCount(2);
  await expect(page.getByTestId('oidc-setup').getByRole('button', { name: 'Create a secret' })).toBeDisabled();
  await expect(page.getByTestId('oidc-setup')).toContainText('Two secrets already: revoke one first.');
  await page.getByRole('button', { name: `Revoke the secret starting ${secret.slice(0, 4)}` }).click();
  await expect(page.getByTestId('client-secret')).toHaveCount(1);
  await expect(page.getByTestId('client-secret')).not.toContainText(`${secret.slice(0, 4)}…`);

  // The list says what protects it; then it goes (and its secrets with it).
  await page.goto(`${portalUrl()}/admin/apps`);
  await expect(appsTable(page).locator('tr[data-app-id="grafana-sso"]')).toContainText('OpenID Connect (grafana-sso)');
  await page.goto(`${portalUrl()}/admin/apps/grafana-sso`);
  await page.getByRole('button', { name: 'Delete app' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps`);
  await expect(appsTable(page).locator('tr[data-app-id="grafana-sso"]')).toHaveCount(0);

  await page.goto(`${portalUrl()}/account`);
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await context.close();
});
