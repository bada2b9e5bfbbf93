import { expect, test, type Browser, type Page } from '@playwright/test';
import { completeIdpLogin, expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The admin console against the real stack. alice is an admin through the default config
 * (`admins: { groups: [admins] }`, and her IdP puts her in `admins`); bob is a member. Each test opens
 * its own browser contexts, so no cookie (the portal's or an IdP's) carries over between tests.
 */

/** A fresh browser (its own cookies), signed in with the Development IdP. */
async function signedInBrowser(browser: Browser, login: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', login, password);
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  return page;
}

const adminNav = (page: Page) => page.getByRole('navigation', { name: 'Admin' });
const usersTable = (page: Page) => page.getByTestId('users-table');
const auditRows = (page: Page) => page.getByTestId('audit-table').locator('tbody tr');

/** From anywhere in the console to bob's page, through the users list and its search. */
async function openBob(page: Page): Promise<void> {
  await adminNav(page).getByRole('link', { name: 'Users' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/users`);
  await expect(usersTable(page).getByRole('link', { name: 'bob@example.com' })).toBeVisible();
  await expectAccessible(page);
  await page.getByRole('searchbox', { name: 'Search users' }).fill('bob');
  await expect(page).toHaveURL(`${portalUrl()}/admin/users?query=bob`);
  await expect(usersTable(page).getByRole('link', { name: 'alice@example.com' })).toHaveCount(0);
  await usersTable(page).getByRole('link', { name: 'bob@example.com' }).click();
  await expect(page).toHaveURL(new RegExp(`^${portalUrl()}/admin/users/[^/?]+$`));
  await expect(page.getByRole('heading', { level: 1, name: 'Bob Example' })).toBeVisible();
}

test('alice finds her way around the console: dashboard, users, bob, the audit log', async ({ browser }) => {
  // bob has signed in at least once, so there is a user to find.
  const bob = await signedInBrowser(browser, 'bob@example.com', 'bob');
  const page = await signedInBrowser(browser, 'alice@example.com', 'alice');

  // The header offers "Admin" to admins.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin`);
  await expect(page.getByRole('heading', { level: 1, name: 'Dashboard' })).toBeVisible();
  const stats = page.getByTestId('stat-cards');
  await expect(stats).toContainText('Live sessions');
  await expect(stats).toContainText('Sign-ins');
  // alice and bob have both signed in within the last 24 hours.
  await expect(page.getByRole('figure', { name: /^Over the last 24 hours: \d+ sign-ins?/ })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Top denied apps' })).toBeVisible();
  await expect(adminNav(page).getByRole('link', { name: 'Dashboard' })).toHaveAttribute('aria-current', 'page');
  await expectAccessible(page);

  // The segmented control's radios are visually hidden behind their labels.
  await page.locator('label', { hasText: '7 days' }).click();
  await expect(page.getByRole('radio', { name: '7 days' })).toBeChecked();
  await expect(page).toHaveURL(`${portalUrl()}/admin?range=7d`);
  await expect(page.getByRole('figure', { name: /^Over the last 7 days:/ })).toBeVisible();

  // Users: the server searches; bob's row leads to his page.
  await openBob(page);
  await expect(page.getByRole('region', { name: 'Access' })).toContainText('Active');
  await expect(page.getByRole('region', { name: 'Access' }).getByRole('button', { name: 'Grant admin' })).toBeEnabled();
  // Granting admin asks first; cancelled, nothing changes.
  await page.getByRole('region', { name: 'Access' }).getByRole('button', { name: 'Grant admin' }).click();
  const grant = page.getByRole('dialog', { name: 'Make bob@example.com an admin?' });
  await expect(grant).toContainText('manage users, apps and providers');
  // The dialog's header is no second banner landmark.
  await expect(page.getByRole('banner')).toHaveCount(1);
  await expectAccessible(page);
  await grant.getByRole('button', { name: 'Cancel' }).click();
  await expect(grant).toBeHidden();
  await expect(page.getByRole('region', { name: 'Access' }).getByRole('button', { name: 'Grant admin' })).toBeVisible();
  // The person's menu in the header of every portal page: apps, account, sign out.
  await page.getByRole('banner').getByRole('button', { name: /^Account menu: / }).click();
  await expect(page.getByRole('menuitem', { name: 'Your apps' })).toBeVisible();
  await expect(page.getByRole('menuitem', { name: 'Account' })).toBeVisible();
  await expect(page.getByRole('menuitem', { name: 'Sign out' })).toBeEnabled();
  await expectAccessible(page);
  await page.getByRole('menuitem', { name: 'Your apps' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/`);
  await page.goBack();
  await expect(page.getByRole('region', { name: 'Linked identities' })).toContainText('Development IdP');
  await expect(page.getByRole('region', { name: 'Sessions' }).getByRole('button', { name: /^Revoke session / })).toHaveCount(1);
  await expect(page.getByRole('region', { name: 'Audit trail' }).getByTestId('audit-table')).toContainText('Sign-in');
  await expectAccessible(page);

  // alice's own page: her role comes from the config file, and she can't suspend herself.
  await adminNav(page).getByRole('link', { name: 'Users' }).click();
  await page.getByRole('searchbox', { name: 'Search users' }).fill('alice');
  await usersTable(page).getByRole('link', { name: 'alice@example.com' }).click();
  const access = page.getByRole('region', { name: 'Access' });
  await expect(access.getByRole('button', { name: 'Remove admin' })).toBeDisabled();
  await expect(access).toContainText('configuration file');
  await expect(access.getByRole('button', { name: 'Suspend' })).toBeDisabled();

  // The audit log, filtered by type; the CSV export carries the same filter.
  await adminNav(page).getByRole('link', { name: 'Audit log' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/audit`);
  await expect(page.getByRole('heading', { level: 1, name: 'Audit log' })).toBeVisible();
  await expect(auditRows(page).first()).toBeVisible();
  await expectAccessible(page);
  await page.getByRole('combobox', { name: 'Event type' }).click();
  await page.getByRole('option', { name: 'Sign-in', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/audit?type=sign_in`);
  await expect(auditRows(page).first()).toBeVisible();
  await expect(auditRows(page).and(page.locator(':not([data-type="sign_in"])'))).toHaveCount(0);
  const exportLink = page.getByRole('link', { name: 'Export CSV' });
  const href = await exportLink.getAttribute('href');
  expect(href).toBe('/api/admin/audit.csv?type=sign_in');
  const csv = await page.request.get(new URL(href!, portalUrl()).toString());
  expect(csv.status()).toBe(200);
  expect(csv.headers()['content-type']).toMatch(/^text\/csv/);
  const lines = (await csv.text()).trim().split(/\r\n/);
  expect(lines[0]).toMatch(/^time,type,outcome,/);
  expect(lines.length).toBeGreaterThan(1);
  expect(lines.slice(1).every((line) => line.split(',')[1] === 'sign_in')).toBe(true);
  // The User filter takes the email people know someone by, not only an id.
  await page.getByRole('searchbox', { name: 'User' }).fill('bob@example.com');
  await page.getByRole('searchbox', { name: 'User' }).press('Enter');
  await expect(page).toHaveURL(`${portalUrl()}/admin/audit?type=sign_in&userId=bob%40example.com`);
  await expect(auditRows(page).first()).toBeVisible();
  await expect(auditRows(page).first()).toContainText('bob@example.com');
  // One page of events reads as a count ("3 events"), not "1–3 of 3 events".
  await expect(page.getByText(/^\d+ events?$/)).toBeVisible();

  // On a phone every admin tab is in sight (they wrap), none hidden past the screen's edge.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(`${portalUrl()}/admin`);
  for (const name of ['Dashboard', 'Users', 'Apps', 'Providers', 'Audit log']) {
    const box = await adminNav(page).getByRole('link', { name }).boundingBox();
    expect(box, name).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width, name).toBeLessThanOrEqual(375);
  }
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('admin-tabs-phone.png') });
  // A console address that names nothing: the one error design, with a way back.
  await page.goto(`${portalUrl()}/admin/no-such-page`);
  await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back to your apps' })).toHaveAttribute('href', '/');
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('not-found-phone.png') });
  // Recent activity pages (10 at a time) instead of growing down the page.
  await page.goto(`${portalUrl()}/account`);
  const activity = page.getByRole('region', { name: 'Recent activity' });
  await expect(activity.getByRole('listitem').first()).toBeVisible();
  expect(await activity.locator('ol > li').count()).toBeLessThanOrEqual(10);
  await expect(activity.getByText(/^(\d+ events?|Showing 1–10 of \d+ events)$/)).toBeVisible();
  await page.screenshot({ path: test.info().outputPath('account-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`${portalUrl()}/admin/audit`);

  // The console in dark mode passes axe too.
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page);
  await adminNav(page).getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByTestId('stat-cards')).toBeVisible();
  await expectAccessible(page);
  await openBob(page);
  await expectAccessible(page);

  await page.context().close();
  await bob.context().close();
});

test('bob is not an admin: no link, and the server refuses the console page and its API', async ({ browser }) => {
  const page = await signedInBrowser(browser, 'bob@example.com', 'bob');
  await expect(page.getByRole('heading', { name: 'Sessions' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Admin' })).toHaveCount(0);

  const response = await page.goto(`${portalUrl()}/admin`);
  expect(response?.status()).toBe(403);
  // Not a dead end: back to the apps, or to the account (where signing out is).
  await expect(page.getByRole('link', { name: 'Your account' })).toHaveAttribute('href', '/account');
  await page.setViewportSize({ width: 375, height: 740 });
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('forbidden-phone.png') });
  await page.getByRole('link', { name: 'Back to your apps' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/`);
  await page.setViewportSize({ width: 1280, height: 720 });

  const api = await page.request.get(`${portalUrl()}/api/admin/users`);
  expect(api.status()).toBe(403);
  expect(api.headers()['content-type']).toMatch(/^application\/problem\+json/);
  expect(await api.json()).toMatchObject({ code: 'forbidden' });
  await page.context().close();
});

test('suspending bob ends his open session and stops him signing in, until he is reactivated', async ({ browser }) => {
  const bob = await signedInBrowser(browser, 'bob@example.com', 'bob');
  const alice = await signedInBrowser(browser, 'alice@example.com', 'alice');

  await alice.goto(`${portalUrl()}/admin`);
  await openBob(alice);
  const access = alice.getByRole('region', { name: 'Access' });
  const sessions = alice.getByRole('region', { name: 'Sessions' });
  await expect(sessions.getByRole('button', { name: /^Revoke session / }).first()).toBeVisible();

  await access.getByRole('button', { name: 'Suspend' }).click();
  const dialog = alice.getByRole('dialog', { name: 'Suspend bob@example.com?' });
  await expect(dialog).toContainText('Their sessions end now');
  await expectAccessible(alice);
  await dialog.getByRole('button', { name: 'Suspend' }).click();
  await expect(dialog).toBeHidden();
  await expect(access.getByRole('status')).toHaveText('bob@example.com is suspended; their sessions have ended.');
  await expect(access).toContainText('Suspended');
  await expect(sessions).toContainText('No active sessions.');
  await expect(alice.getByRole('region', { name: 'Audit trail' }).locator('tr[data-type="user_suspended"]').first()).toContainText(
    'status: active → suspended',
  );

  // bob's open browser is signed out at its next page load...
  await bob.goto(`${portalUrl()}/account`);
  await expect(bob).toHaveURL(/\/sign-in\?rd=(\/|%2F)account$/);
  // ...and signing in again ends on the account_suspended page (the IdP may still remember him).
  await bob.getByRole('link', { name: 'Sign in with Development IdP' }).or(bob.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  const loginField = bob.locator('input[name="login"]');
  const suspendedText = bob.getByText('Your account is suspended');
  await expect(loginField.or(suspendedText).first()).toBeVisible();
  if (await loginField.isVisible()) {
    await loginField.fill('bob@example.com');
    await bob.locator('input[name="password"]').fill('bob');
    await bob.getByRole('button', { name: 'Sign in' }).click();
  }
  await expect(suspendedText).toBeVisible();
  expect((await bob.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
  // A way back from the suspended page.
  await expect(bob.getByRole('link', { name: 'Back to sign-in' })).toBeVisible();
  await expectAccessible(bob);

  // Reactivated, bob may sign in again.
  await access.getByRole('button', { name: 'Reactivate' }).click();
  await expect(access.getByRole('status')).toHaveText('bob@example.com is active again and can sign in.');
  await expect(access.getByRole('button', { name: 'Suspend' })).toBeEnabled();
  await bob.goto(`${portalUrl()}/sign-in`);
  await bob.getByRole('link', { name: 'Sign in with Development IdP' }).or(bob.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await completeIdpLogin(bob, 'bob@example.com', 'bob');
  await expect(bob).toHaveURL(`${portalUrl()}/account`);

  await alice.context().close();
  await bob.context().close();
});
