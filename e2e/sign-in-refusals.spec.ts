import { expect, test } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * A refused sign-in as a person meets it in a browser, and as an admin reads it in the audit log: the
 * organisation narrows sign-in to example.com, carol (carol@partner.example at the Partner IdP) is
 * refused, and the page names the real reason — her domain — not a general "may not sign in".
 */
test('a refused sign-in names the domain to the person and the rule to the admin', async ({ browser }, testInfo) => {
  const admin = await (await browser.newContext()).newPage();
  await signInWith(admin, 'Development IdP', 'alice@example.com', 'alice');
  const csrf = ((await (await admin.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
  const settings = (body: object) =>
    admin.request.put(`${portalUrl()}/api/admin/sign-in-settings`, { data: body, headers: { origin: portalUrl(), 'x-csrf-token': csrf } });
  expect((await settings({ allowedDomains: ['example.com'], createUsers: true })).ok()).toBe(true);
  try {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${portalUrl()}/sign-in`);
    await page.getByRole('link', { name: 'Sign in with Partner IdP' }).or(page.getByRole('button', { name: 'Sign in with Partner IdP' })).click();
    await page.locator('input[name="login"]').fill('carol@partner.example');
    await page.locator('input[name="password"]').fill('carol');
    await page.getByRole('button', { name: 'Sign in' }).click();

    await expect(page.getByRole('heading', { level: 1, name: 'Sign-in not allowed' })).toBeVisible();
    await expect(page.getByText('partner.example is not allowed here. Contact your administrator if you think it should.')).toBeVisible();
    await expect(page.getByText('sign_in_not_allowed')).toBeVisible();
    await expect(page.getByRole('link', { name: 'Back to sign-in' })).toHaveAttribute('href', '/sign-in');
    // The admins' sentence stays with the admins.
    await expect(page.getByText("among the organisation's allowed domains")).toHaveCount(0);
    await expectAccessible(page);
    await page.screenshot({ path: testInfo.outputPath('refused-domain.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: testInfo.outputPath('refused-domain-phone.png'), fullPage: true });

    // The console's audit log reads the reason and the rule.
    await admin.goto(`${portalUrl()}/admin/audit?type=sign_in_failed`);
    const row = admin.getByTestId('audit-table').locator('tbody tr').first();
    await expect(row).toContainText("Reason: the email's domain is not allowed here");
    await expect(row).toContainText("Why: partner.example is not among the organisation's allowed domains");
  } finally {
    await settings({ allowedDomains: [], createUsers: true });
  }
});
