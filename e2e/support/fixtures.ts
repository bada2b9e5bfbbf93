import { AxeBuilder } from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

export const portalUrl = () => process.env.GATEHOUSE_URL!;

/** Signs in through the development IdP's real login form, as a person would. */
export async function signInWithDevIdp(page: Page, login: string, password: string): Promise<void> {
  await page.goto(`${portalUrl()}/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The part of the DOM's `document` that `expectAccessible` reads in the page. */
interface AnimatedDocument {
  document: { getAnimations(): { playState: string; effect: { getComputedTiming(): { endTime?: number } } | null }[] };
}

/**
 * axe-core: no serious or critical accessibility violations on the page once it has settled. Mantine
 * fades dialogs and menus in: axe measuring colour contrast halfway through a fade sees a translucent
 * button and reports it, so it waits for running CSS transitions and animations to end first. `soft`:
 * a violation fails the test at its end, so a run through many screens reports all of them.
 */
export async function expectAccessible(page: Page, { soft = false }: { soft?: boolean } = {}): Promise<void> {
  // Finite ones only: a loading spinner runs for ever. (A function, not a string: the portal's CSP
  // forbids eval. The tests are type-checked without the DOM library, hence the local type.)
  await page.waitForFunction(() =>
    (globalThis as unknown as AnimatedDocument).document
      .getAnimations()
      .every((animation) => animation.playState !== 'running' || animation.effect?.getComputedTiming().endTime === Infinity),
  );
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  (soft ? expect.soft : expect)(serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
}

/** True once the browser is back on the portal, past the sign-in page and the server's own endpoints. */
function backOnPortal(url: URL): boolean {
  return url.origin === new URL(portalUrl()).origin && !url.pathname.startsWith('/sign-in') && !url.pathname.startsWith('/.gatehouse/');
}

/**
 * Finishes a trip to an IdP that was just started (a sign-in or a link): fills its login form when it
 * shows one, or follows it straight back when the IdP still has a session of its own and skips the
 * form. Resolves once the browser is back on the portal.
 */
export async function completeIdpLogin(page: Page, login: string, password: string): Promise<void> {
  const loginField = page.locator('input[name="login"]');
  const outcome = await Promise.race([
    loginField.waitFor({ state: 'visible', timeout: 20_000 }).then(() => 'form' as const),
    page.waitForURL(backOnPortal, { timeout: 20_000 }).then(() => 'back' as const),
  ]).catch(() => 'timeout' as const);
  if (outcome === 'timeout') throw new Error(`Neither the IdP's login form nor the portal appeared; the page is at ${page.url()}`);
  if (outcome === 'form') {
    await loginField.fill(login);
    await page.locator('input[name="password"]').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(backOnPortal);
  }
}

/**
 * Signs in from the portal's sign-in page with the named provider ("Development IdP", "Partner IdP"),
 * whether or not that IdP still remembers the browser.
 */
export async function signInWith(page: Page, providerName: string, login: string, password: string): Promise<void> {
  await page.goto(`${portalUrl()}/sign-in`);
  const name = `Sign in with ${providerName}`;
  await page.getByRole('link', { name }).or(page.getByRole('button', { name })).click();
  await completeIdpLogin(page, login, password);
}
