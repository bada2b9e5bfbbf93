import { expect, test, type Page } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The sign-in page as a person first sees it, signed out: what it says (the product's name once, and
 * no app's name: those are told only to someone signed in), and that it holds on a phone (the provider
 * buttons wrap their names rather than cutting them off). The stack has two providers, "Development
 * IdP" and "Partner IdP", and no organisation name of its own (the default is the product's name).
 */

const appUrl = (host: string) => `http://${host}.localhost:${new URL(portalUrl()).port}/`;
const providerLinks = (page: Page) => page.getByRole('link', { name: /^Sign in with / });

/** Whether each provider link shows its whole name inside itself, and sits inside the screen. */
async function namesFitInButtons(page: Page): Promise<Array<{ name: string; fits: boolean; lines: number }>> {
  const width = page.viewportSize()!.width;
  const links = await providerLinks(page).all();
  const results = [];
  for (const link of links) {
    results.push(
      await link.evaluate((element, screenWidth) => {
        const label = element.querySelector('span')!;
        const box = element.getBoundingClientRect();
        const text = label.getBoundingClientRect();
        const lineHeight = Number.parseFloat(element.ownerDocument.defaultView!.getComputedStyle(label).lineHeight);
        return {
          name: label.textContent ?? '',
          // Nothing overflows the button (cut off or hidden), and the button stays on the screen.
          fits: element.scrollWidth <= element.clientWidth && text.left >= box.left && text.right <= box.right && box.left >= 0 && box.right <= screenWidth,
          lines: Math.round(text.height / lineHeight),
        };
      }, width),
    );
  }
  return results;
}

test('the sign-in page names no app to a stranger, the product only once, and the app to someone signed in', async ({ page }, testInfo) => {
  // Signed out, opening an app: the sign-in page is public and its rd anyone's to choose, so it names
  // no app (Threat: app names disclosed to strangers, who could ask about any host).
  await page.goto(appUrl('whoami'));
  await expect(page).toHaveURL((url) => url.origin === portalUrl() && url.pathname === '/sign-in');
  await expect(page.getByTestId('sign-in-purpose')).toHaveText("Use your organisation's account to continue.");
  await expect(page.getByText('Whoami')).toHaveCount(0);
  await expect(providerLinks(page)).toHaveCount(2);
  // The header names the product; the card does not repeat it (the organisation has no name of its own).
  await expect(page.getByText('Gatehouse', { exact: true })).toHaveCount(1);
  await expect(page.getByTestId('organization-name')).toHaveCount(0);
  await expectAccessible(page);
  await page.screenshot({ path: testInfo.outputPath('sign-in-app-desktop.png'), fullPage: true });

  // Straight to the portal: no app to name.
  await page.goto(`${portalUrl()}/sign-in`);
  await expect(page.getByTestId('sign-in-purpose')).toHaveText("Use your organisation's account to continue.");
  // Threat: content injection — an rd outside the configured apps names nothing.
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent('https://evil.example/Whoami')}`);
  await expect(providerLinks(page).first()).toBeVisible();
  await expect(page.getByTestId('sign-in-purpose')).toHaveText("Use your organisation's account to continue.");

  // Signed in, the same page names the app it goes on to.
  await signInWith(page, 'Development IdP', 'bob@example.com', 'bob');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent(appUrl('whoami'))}`);
  await expect(page.getByTestId('sign-in-purpose')).toHaveText("Use your organisation's account to continue to Whoami.");
});

test('on a phone the provider buttons wrap their names instead of cutting them off', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(`${portalUrl()}/sign-in?rd=${encodeURIComponent(appUrl('whoami'))}`);
  await expect(providerLinks(page)).toHaveCount(2);
  for (const result of await namesFitInButtons(page)) expect(result, result.name).toMatchObject({ fits: true });
  await expectAccessible(page);
  await page.screenshot({ path: testInfo.outputPath('sign-in-phone.png'), fullPage: true });

  // The narrowest phones: "Sign in with Development IdP" no longer fits on one line, so it takes two.
  await page.setViewportSize({ width: 320, height: 640 });
  const narrow = await namesFitInButtons(page);
  for (const result of narrow) expect(result, result.name).toMatchObject({ fits: true });
  expect(narrow.find((result) => result.name === 'Sign in with Development IdP')?.lines).toBe(2);
  await expect(page.getByText('Sign in with Development IdP')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('sign-in-phone-320.png'), fullPage: true });
});

test('a link inside the app to the sign-in page loads the sign-in page itself', async ({ page }) => {
  // The app's own router has no sign-in page: it hands /sign-in to the server, query and all.
  await page.goto(`${portalUrl()}/signed-out`);
  await page.getByRole('link', { name: 'Sign in again' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/sign-in`);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(providerLinks(page)).toHaveCount(2);
  // Signed out, a page that needs a session goes through the same page and keeps where it was going.
  await page.goto(`${portalUrl()}/account`);
  await expect(page).toHaveURL(/\/sign-in\?rd=(\/|%2F)account$/);
  await expect(providerLinks(page).first()).toHaveAttribute('href', `/.gatehouse/sign-in/dev?rd=${encodeURIComponent('/account')}`);
});

test('the sign-in page with an error banner passes axe in light and dark', async ({ page }, testInfo) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.goto(`${portalUrl()}/sign-in?error=sign_in_denied&provider=dev&ref=0123abcd`);
    const banner = page.locator('[data-error-code="sign_in_denied"]');
    await expect(banner).toContainText('Development IdP did not sign you in');
    await expect(banner).toContainText('Reference: 0123abcd');
    await expect(providerLinks(page)).toHaveCount(2);
    await expectAccessible(page);
    await page.screenshot({ path: testInfo.outputPath(`sign-in-error-${colorScheme}.png`), fullPage: true });
  }
});
