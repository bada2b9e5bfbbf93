import { expect, test, type Browser, type Page } from '@playwright/test';
import { completeIdpLogin, expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The account center against the real stack: sessions a person controls from another browser, and
 * linking a second IdP (the Partner IdP) to one account. Each test opens its own browser contexts, so
 * no cookie (the portal's or an IdP's) carries over from one test to the next.
 */

const accountUrl = () => `${portalUrl()}/account`;

/** A fresh browser (its own cookies), signed in with the Development IdP and on /account. */
async function signedInBrowser(browser: Browser, login: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', login, password);
  await expect(page).toHaveURL(accountUrl());
  return page;
}

const sessionsSection = (page: Page) => page.getByRole('region', { name: 'Sessions' });
const identitiesSection = (page: Page) => page.getByRole('region', { name: 'Linked identities' });
const sessionRows = (page: Page) => sessionsSection(page).getByRole('listitem');

/** Loads /account afresh and expects to be sent to sign in: this browser's session is over. */
async function expectSignedOut(page: Page): Promise<void> {
  await page.goto(accountUrl());
  await expect(page).toHaveURL(/\/sign-in\?rd=(\/|%2F)account$/);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect((await page.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
}

test('revoking another session signs that browser out', async ({ browser }) => {
  const first = await signedInBrowser(browser, 'alice@example.com', 'alice');
  const second = await signedInBrowser(browser, 'alice@example.com', 'alice');

  await first.reload();
  await expect(sessionRows(first)).toHaveCount(2);
  const current = sessionRows(first).filter({ hasText: 'This session' });
  await expect(current).toHaveCount(1);
  // The current session is ended with "Sign out", never revoked from the list.
  await expect(current.getByRole('button', { name: /^Revoke/ })).toHaveCount(0);
  const other = sessionRows(first).filter({ hasNotText: 'This session' });
  // Over loopback, whichever of the two addresses "localhost" resolved to.
  await expect(other).toContainText(/IP address\s*(::1|127\.0\.0\.1|::ffff:127\.0\.0\.1)/);
  await expect(other).toContainText('Last active');
  await expect(first.getByRole('button', { name: 'Sign out everywhere else' })).toBeEnabled();
  await expectAccessible(first);

  const revoke = other.getByRole('button', { name: /^Revoke session / });
  await expect(revoke).toHaveText('Revoke');
  await revoke.click();
  await expect(sessionRows(first)).toHaveCount(1);
  await expect(sessionRows(first)).toContainText('This session');
  await expect(first.getByRole('button', { name: 'Sign out everywhere else' })).toBeDisabled();
  // The activity records it.
  await expect(first.getByRole('region', { name: 'Recent activity' })).toContainText('Session revoked by you');

  await expectSignedOut(second);
  // The first browser is still signed in.
  await first.reload();
  await expect(first.getByRole('heading', { name: 'Sessions' })).toBeVisible();
  await expect(first).toHaveURL(accountUrl());

  // Leave no session of alice's behind for the tests after this one.
  await first.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(first).toHaveURL(`${portalUrl()}/signed-out`);
  await first.context().close();
  await second.context().close();
});

test('sign out everywhere else, then sign out everywhere', async ({ browser }) => {
  const first = await signedInBrowser(browser, 'bob@example.com', 'bob');
  const second = await signedInBrowser(browser, 'bob@example.com', 'bob');

  // "Sign out everywhere else" ends the second browser's session and keeps this one.
  await first.reload();
  await expect(sessionRows(first)).toHaveCount(2);
  await first.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await expect(sessionsSection(first).getByRole('status')).toHaveText('Signed out 1 other session.');
  await expect(sessionRows(first)).toHaveCount(1);
  await expect(first.getByRole('button', { name: 'Sign out everywhere else' })).toBeDisabled();
  await expectSignedOut(second);

  // The second browser signs in again (the IdP may remember it and skip its form).
  await signInWith(second, 'Development IdP', 'bob@example.com', 'bob');
  await expect(second).toHaveURL(accountUrl());
  await first.reload();
  await expect(sessionRows(first)).toHaveCount(2);

  // "Sign out everywhere" asks first; "Cancel" changes nothing.
  await first.getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
  const dialog = first.getByRole('dialog', { name: 'Sign out everywhere?' });
  await expect(dialog).toBeVisible();
  await expectAccessible(first);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  await expect(sessionRows(first)).toHaveCount(2);

  await first.getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
  await dialog.getByRole('button', { name: 'Sign out everywhere' }).click();
  await expect(first).toHaveURL(`${portalUrl()}/signed-out`);
  expect((await first.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
  await expectSignedOut(second);

  await first.context().close();
  await second.context().close();
});

test('alice links the Partner IdP, signs in with it, and unlinks it again', async ({ browser }) => {
  const page = await signedInBrowser(browser, 'alice@example.com', 'alice');
  const identities = identitiesSection(page);
  await expect(identities.getByRole('listitem')).toHaveCount(1);
  await expect(identities.getByRole('listitem')).toContainText('Development IdP');
  // The only identity cannot be unlinked; the page says why instead of offering the button.
  await expect(identities.getByRole('button', { name: /^Unlink/ })).toHaveCount(0);
  await expect(identities).toContainText("can't be unlinked");

  // Linking: a form post to the server, a trip to the Partner IdP, and back to /account.
  await identities.getByRole('button', { name: 'Link Partner IdP', exact: true }).click();
  await completeIdpLogin(page, 'alice@partner.example', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account?linked=partner`);
  await expect(page.getByText('Partner IdP is now linked to your account.')).toBeVisible();
  const partnerRow = identities.getByRole('listitem').filter({ hasText: 'Partner IdP' });
  await expect(partnerRow).toContainText('alice@partner.example');
  const devRow = identities.getByRole('listitem').filter({ hasText: 'Development IdP' });
  await expect(devRow).toContainText('Primary');
  await expect(devRow).toContainText('Used for this session');
  await expect(identities.getByRole('button', { name: 'Link Partner IdP', exact: true })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Recent activity' })).toContainText('Linked Partner IdP');
  // Every section is on the page, with data: the whole account center is checked at once.
  await expect(sessionRows(page).filter({ hasText: 'This session' })).toHaveCount(1);
  await expectAccessible(page);

  // Sign out (this also logs out at the Development IdP only), then in with the Partner IdP.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await signInWith(page, 'Partner IdP', 'alice@partner.example', 'alice');
  await expect(page).toHaveURL(accountUrl());
  // The same account: alice's name and primary email, not the Partner IdP's.
  await expect(page.getByRole('heading', { name: 'Alice Example' })).toBeVisible();
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
  await expect(page.getByText('Signed in with Partner IdP').first()).toBeVisible();
  await expect(identities.getByRole('listitem').filter({ hasText: 'Partner IdP' })).toContainText('Used for this session');

  // Back with the Development IdP, unlink the Partner IdP.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await expect(page).toHaveURL(accountUrl());
  await identities.getByRole('button', { name: 'Unlink Partner IdP' }).click();
  const dialog = page.getByRole('dialog', { name: 'Unlink Partner IdP?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Unlink' }).click();
  await expect(dialog).toBeHidden();
  await expect(identities.getByRole('listitem')).toHaveCount(1);
  await expect(identities.getByRole('listitem').filter({ hasText: 'Partner IdP' })).toHaveCount(0);
  await expect(identities.getByRole('status')).toHaveText('Partner IdP is no longer linked to your account.');
  await expect(identities.getByRole('button', { name: 'Link Partner IdP', exact: true })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Recent activity' })).toContainText('Unlinked Partner IdP');
  await expectAccessible(page);

  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
  await page.context().close();
});

test('unlinking the identity this session signed in with says so and offers the other providers', async ({ browser }) => {
  const page = await signedInBrowser(browser, 'alice@example.com', 'alice');
  const identities = identitiesSection(page);
  await identities.getByRole('button', { name: 'Link Partner IdP', exact: true }).click();
  await completeIdpLogin(page, 'alice@partner.example', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account?linked=partner`);

  // Unlink the Development IdP, which this session signed in with: the server ends the session.
  await expect(identities.getByRole('listitem').filter({ hasText: 'Development IdP' })).toContainText('Used for this session');
  await identities.getByRole('button', { name: 'Unlink Development IdP' }).click();
  const dialog = page.getByRole('dialog', { name: 'Unlink Development IdP?' });
  await expect(dialog).toContainText('you will be signed out here too');
  await dialog.getByRole('button', { name: 'Unlink' }).click();

  // The sign-in page says what happened, never "You are already signed in", and offers only the
  // provider still linked.
  await expect(page).toHaveURL(/\/sign-in\?error=identity_unlinked&provider=dev$/);
  const notice = page.getByRole('alert').filter({ hasText: 'You unlinked the identity you signed in with' });
  await expect(notice).toContainText('Development IdP no longer signs in to your account, so that session ended. Sign in with one of your other providers.');
  await expect(page.getByText('You are already signed in')).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'Sign in with Partner IdP' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Sign in with Development IdP' })).toHaveCount(0);
  expect((await page.request.get(`${portalUrl()}/api/session`)).status()).toBe(401);
  await page.screenshot({ path: test.info().outputPath('unlinked-current-identity.png'), fullPage: true });
  await expectAccessible(page);

  // The offered provider signs in to the same account; linking the Development IdP again and
  // unlinking the Partner IdP leaves alice as the other tests expect her.
  await page.getByRole('link', { name: 'Sign in with Partner IdP' }).click();
  await completeIdpLogin(page, 'alice@partner.example', 'alice');
  await expect(page).toHaveURL(accountUrl());
  await expect(page.getByRole('heading', { name: 'Alice Example' })).toBeVisible();
  await identities.getByRole('button', { name: 'Link Development IdP', exact: true }).click();
  await completeIdpLogin(page, 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account?linked=dev`);
  await identities.getByRole('button', { name: 'Unlink Partner IdP' }).click();
  await page.getByRole('dialog', { name: 'Unlink Partner IdP?' }).getByRole('button', { name: 'Unlink' }).click();
  await expect(page).toHaveURL(/\/sign-in\?error=identity_unlinked&provider=partner$/);
  await expect(page.getByRole('link', { name: 'Sign in with Development IdP' })).toBeVisible();
  await page.context().close();
});

test('a session revoked elsewhere shows signed out at the next answer, without a reload', async ({ browser }) => {
  const first = await signedInBrowser(browser, 'bob@example.com', 'bob');
  const second = await signedInBrowser(browser, 'bob@example.com', 'bob');
  await first.reload();
  await expect(sessionRows(first)).toHaveCount(2);

  // The second browser revokes the first one's session while the first still shows its account.
  await second.reload();
  await sessionRows(second).filter({ hasNotText: 'This session' }).getByRole('button', { name: /^Revoke session / }).click();
  await expect(sessionRows(second)).toHaveCount(1);

  // The first browser's next request is answered 401: it is sent to sign in, and the sign-in page
  // no longer claims it is signed in (the cached session was dropped, not kept beside the error).
  await first.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await expect(first).toHaveURL(/\/sign-in\?rd=(\/|%2F)account$/);
  await expect(first.getByRole('link', { name: 'Sign in with Development IdP' })).toBeVisible();
  await expect(first.getByText('You are already signed in')).toHaveCount(0);
  await expect(first.getByRole('link', { name: /^Continue/ })).toHaveCount(0);

  await second.getByRole('button', { name: 'Sign out', exact: true }).click();
  await expect(second).toHaveURL(`${portalUrl()}/signed-out`);
  await first.context().close();
  await second.context().close();
});
