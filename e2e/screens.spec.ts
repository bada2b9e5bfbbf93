import { expect, test, type Browser, type BrowserContext, type Locator, type Page, type TestInfo } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';
import { layoutProblems } from './support/layout.js';

/**
 * Every screen a person or an admin meets, at the widths of the narrowest phones (320 px), common ones
 * (375, 414) and a laptop (1280), in the light and the dark scheme: nothing wider than the screen
 * (outside elements meant to scroll that say so), no text cut off or squeezed, the header holding its
 * content, and no serious or critical axe violation (AXE_WIDTHS). Each screen is written as a
 * screenshot into the test's output folder (`<width>/<screen>-<scheme>.png`), for people to look at.
 *
 * One signed-in browser per person and width (alice the admin, bob the member, and a visitor signed
 * out): the screens are visited in turn, each checked once it shows what it is for.
 */

const WIDTHS = [320, 375, 414, 1280] as const;
/**
 * axe at the narrowest phone and the laptop, in both schemes: colours depend on the scheme, not the
 * width, and 375 and 414 px lay the pages out as 320 does (their layout is checked, and shot, all the
 * same). It keeps the spec's run within a minute or so per width on two cores.
 */
const AXE_WIDTHS: ReadonlySet<number> = new Set([320, 1280]);
const SCHEMES = ['light', 'dark'] as const;

/** A console provider with a long name and a long address (GitHub Enterprise Server), hidden until tested. */
const LONG_PROVIDER = {
  id: 'github-engineering',
  name: 'GitHub Enterprise (Engineering and Operations)',
  kind: 'github',
  baseUrl: 'https://github.engineering-and-operations.example-corporation.com',
  clientId: 'gatehouse-console-e2e',
  clientSecret: 'screens-spec-secret',
  scopes: ['read:user', 'user:email', 'read:org'],
  allowedDomains: [],
  createUsers: false,
  trustEmail: false,
  assumeEmailVerified: false,
  trustGroups: false,
  authorizationParams: {},
};

const appUrl = (host: string) => `http://${host}.localhost:${new URL(portalUrl()).port}/`;
const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name });

async function signedIn(browser: Browser, width: number, login: string, password: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  await signInWith(page, 'Development IdP', login, password);
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  return page;
}

async function adminRequest(page: Page, method: 'POST' | 'DELETE', path: string, data?: unknown) {
  const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
  return page.request.fetch(`${portalUrl()}${path}`, { method, headers: { origin: portalUrl(), 'x-csrf-token': csrf }, ...(data ? { data } : {}) });
}

test.beforeAll(async ({ browser }) => {
  const page = await signedIn(browser, 1280, 'alice@example.com', 'alice');
  await adminRequest(page, 'DELETE', `/api/admin/providers/${LONG_PROVIDER.id}`);
  const created = await adminRequest(page, 'POST', '/api/admin/providers', LONG_PROVIDER);
  expect(created.status(), await created.text()).toBe(201);
  await page.context().close();
});

test.afterAll(async ({ browser }) => {
  const page = await signedIn(browser, 1280, 'alice@example.com', 'alice');
  const deleted = await adminRequest(page, 'DELETE', `/api/admin/providers/${LONG_PROVIDER.id}`);
  expect(deleted.ok(), await deleted.text()).toBe(true);
  await page.context().close();
});

/** The checks of one screen, once it shows `ready`, in both schemes; a screenshot of each. */
async function checkScreen(page: Page, testInfo: TestInfo, name: string, ready: Locator): Promise<void> {
  await expect(ready).toBeVisible();
  const width = page.viewportSize()!.width;
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    expect.soft(await layoutProblems(page), `${name} at ${width} px, ${scheme}`).toEqual([]);
    if (AXE_WIDTHS.has(width)) await expectAccessible(page, { soft: true });
    await page.screenshot({ path: testInfo.outputPath(`${width}`, `${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

for (const width of WIDTHS) {
  test(`every screen fits ${width} px, in light and dark`, async ({ browser }, testInfo) => {
    test.setTimeout(300_000);
    const contexts: BrowserContext[] = [];
    const screen = (page: Page) => ({
      async visit(path: string, name: string, ready: (page: Page) => Locator) {
        await page.goto(path.startsWith('http') ? path : `${portalUrl()}${path}`);
        await checkScreen(page, testInfo, name, ready(page));
      },
    });

    // Signed out: the sign-in page (with and without an error), the signed-out page, the server's own pages.
    const visitorContext = await browser.newContext({ viewport: { width, height: 800 } });
    contexts.push(visitorContext);
    const visitor = screen(await visitorContext.newPage());
    await visitor.visit('/sign-in', 'sign-in', (page) => page.getByRole('link', { name: 'Sign in with Development IdP' }));
    await visitor.visit('/sign-in?error=sign_in_denied&provider=dev&ref=0123abcd', 'sign-in-error', (page) => page.locator('[data-error-code="sign_in_denied"]'));
    await visitor.visit('/signed-out', 'signed-out', (page) => h1(page, 'You are signed out'));
    await visitor.visit('/no-such-page', 'server-not-found', (page) => page.getByRole('heading', { level: 1 }));

    // bob, a member: refused by an app and by the console, and his account page says which app.
    const bob = await signedIn(browser, width, 'bob@example.com', 'bob');
    contexts.push(bob.context());
    await screen(bob).visit(appUrl('admin-demo'), 'app-denied', (page) => page.getByRole('heading', { level: 1 }));
    await screen(bob).visit('/admin', 'console-forbidden', (page) => page.getByRole('link', { name: 'Back to your apps' }));
    await screen(bob).visit('/account', 'account-member', (page) => page.getByRole('region', { name: 'Recent activity' }).getByText('Denied access to Admin demo').first());
    await screen(bob).visit(appUrl('whoami'), 'demo-app', (page) => h1(page, 'whoami'));

    // alice, an admin: her own pages, then every console screen.
    const alice = await signedIn(browser, width, 'alice@example.com', 'alice');
    contexts.push(alice.context());
    const admin = screen(alice);
    await admin.visit('/', 'launcher', (page) => page.getByRole('region', { name: 'Your apps' }).getByRole('link', { name: 'Whoami', exact: true }));
    await admin.visit('/account', 'account', (page) => page.getByRole('region', { name: 'Sessions' }).getByRole('listitem').first());
    await admin.visit('/admin', 'dashboard', (page) => page.getByRole('figure', { name: /^Over the last 24 hours/ }));
    await admin.visit('/admin/users', 'users', (page) => page.getByTestId('users-table').getByRole('link', { name: 'bob@example.com' }));
    const bobId = ((await (await alice.request.get(`${portalUrl()}/api/admin/users?query=bob%40example.com`)).json()) as { users: Array<{ id: string }> }).users[0]!.id;
    await admin.visit(`/admin/users/${bobId}`, 'user', (page) => h1(page, 'Bob Example'));
    await admin.visit('/admin/apps', 'apps', (page) => page.getByTestId('apps-table').getByRole('link', { name: 'Whoami', exact: true }));
    await admin.visit('/admin/apps/new', 'app-new', (page) => h1(page, 'New app'));
    await admin.visit('/admin/apps/whoami', 'app', (page) => h1(page, 'Whoami'));
    // The header's "Admin" keeps its name when only its gear shows (below 360 px).
    await expect(alice.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' })).toBeVisible();
    await admin.visit('/admin/providers', 'providers', (page) => page.getByTestId('providers-table').getByRole('link', { name: LONG_PROVIDER.name }));
    // A provider never tested is on nobody's sign-in page, and the list says so rather than show a switch that is on.
    const hiddenRow = alice.getByTestId('providers-table').locator(`tr[data-provider-id="${LONG_PROVIDER.id}"]`);
    await expect(hiddenRow).toContainText('Not until tested');
    await expect(hiddenRow.getByRole('switch')).toHaveCount(0);
    await admin.visit('/admin/providers/new', 'provider-kinds', (page) => page.getByRole('radiogroup', { name: 'Kind of provider' }));
    await admin.visit('/admin/providers/new?kind=google', 'provider-new-google', (page) => page.getByRole('region', { name: 'Google settings' }));
    await admin.visit('/admin/providers/dev', 'provider-config', (page) => page.getByTestId('config-summary'));
    await admin.visit(`/admin/providers/${LONG_PROVIDER.id}`, 'provider-hidden', (page) => page.getByTestId('provider-hidden'));
    await expect(alice.getByRole('switch', { name: 'Offer on the sign-in page once tested' })).toBeChecked();
    await admin.visit('/admin/audit', 'audit', (page) => page.getByTestId('audit-table').locator('tbody tr').first());
    if (width === 1280) {
      // Between a phone and a laptop (a tablet beside the navigation) the log's columns need more room than
      // there is: the table scrolls in its frame, says so, and the frame takes the keyboard.
      await alice.setViewportSize({ width: 1024, height: 800 });
      const frame = alice.getByRole('region', { name: 'Audit events' });
      await expect(frame).toHaveAccessibleDescription('Scroll sideways to see every column.');
      await expect(frame).toHaveAttribute('tabindex', '0');
      expect(await layoutProblems(alice)).toEqual([]);
      await alice.screenshot({ path: testInfo.outputPath('1024', 'audit-light.png'), fullPage: true });
      await alice.setViewportSize({ width, height: 800 });
      await expect(frame).toHaveCount(0);
    }
    await admin.visit('/admin/no-such-page', 'console-not-found', (page) => h1(page, 'Page not found'));
    // A test sign-in with the Development IdP (alice's IdP session brings her straight back) and its result.
    await alice.goto(`${portalUrl()}/admin/providers/dev`);
    await alice.getByRole('button', { name: 'Test sign-in' }).click();
    await alice.waitForURL(/\/admin\/providers\/dev\/tests\/[\w-]+$/);
    await checkScreen(alice, testInfo, 'provider-test-result', alice.getByTestId('provider-test-result'));

    for (const context of contexts) await context.close();
  });
}
