import { expect, test, type Browser, type Locator, type Page } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The console's Apps area against the real stack: the config apps (whoami, admin-demo) are read-only,
 * an app created here is live at once behind Gatehouse's proxy, and the policy tester names the rule
 * that decides. alice is an admin (group `admins`); bob is a member.
 */

const reportsUrl = () => `http://reports.localhost:${new URL(portalUrl()).port}`;
const adminNav = (page: Page) => page.getByRole('navigation', { name: 'Admin' });
const appsTable = (page: Page) => page.getByTestId('apps-table');
const appRow = (page: Page, id: string) => appsTable(page).locator(`tr[data-app-id="${id}"]`);

/** The browsers a test signed in; signed out after it whatever its outcome, so later specs see no sessions of theirs. */
const signedIn: Page[] = [];

test.afterEach(async () => {
  for (const page of signedIn.splice(0)) {
    await page.goto(`${portalUrl()}/account`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect(page).toHaveURL(`${portalUrl()}/signed-out`);
    await page.context().close();
  }
});

async function signedInBrowser(browser: Browser, login: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  signedIn.push(page);
  await signInWith(page, 'Development IdP', login, password);
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  return page;
}

/** Opens an app host, signing in with the Development IdP if asked, until `expected` shows. */
async function openApp(page: Page, url: string, login: string, password: string, expected: Locator): Promise<void> {
  await page.goto(url);
  const provider = page.getByRole('link', { name: 'Sign in with Development IdP' });
  const loginField = page.locator('input[name="login"]');
  await expect(expected.or(provider).or(loginField).first()).toBeVisible();
  if (await provider.isVisible()) {
    await provider.click();
    await expect(expected.or(loginField).first()).toBeVisible();
  }
  if (await loginField.isVisible()) {
    await loginField.fill(login);
    await page.locator('input[name="password"]').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await expect(expected).toBeVisible();
}

async function testPolicyFor(page: Page, search: string, email: string): Promise<Locator> {
  const tester = page.getByRole('region', { name: 'Test this policy' });
  const user = tester.getByRole('combobox', { name: 'User' });
  await user.fill(search);
  await page.getByRole('option', { name: email, exact: true }).click();
  await expect(user).toHaveValue(email);
  await tester.getByRole('button', { name: 'Test', exact: true }).click();
  const result = tester.getByTestId('policy-test-result');
  await expect(result).toContainText(`Tested as ${email}`);
  return result;
}

test('alice adds an app with a policy, tests it, and it guards the app at once; then she deletes it', async ({ browser }) => {
  // bob signs in once, so the tester can pick him.
  const bob = await signedInBrowser(browser, 'bob@example.com', 'bob');
  const page = await signedInBrowser(browser, 'alice@example.com', 'alice');

  // The list: the config apps, read-only.
  await page.goto(`${portalUrl()}/admin`);
  await adminNav(page).getByRole('link', { name: 'Apps' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps`);
  await expect(page.getByRole('heading', { level: 1, name: 'Apps' })).toBeVisible();
  await expect(adminNav(page).getByRole('link', { name: 'Apps' })).toHaveAttribute('aria-current', 'page');
  for (const id of ['whoami', 'admin-demo']) {
    await expect(appRow(page, id)).toContainText('From gatehouse.yaml');
  }
  await expect(appRow(page, 'whoami')).toContainText('Allow: groups staff');
  await expectAccessible(page);

  // A config app opens read-only: nothing to save or delete.
  await appRow(page, 'whoami').getByRole('link', { name: 'Whoami', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Whoami' })).toBeVisible();
  // Shown as a readable summary (no faint disabled inputs), labelled by the file the server read, with Copy as YAML.
  const summary = page.getByTestId('config-summary');
  await expect(summary.getByRole('heading', { level: 2 })).toHaveText(/^Defined in \/.+\/gatehouse\.yaml$/);
  await expect(summary).toContainText('Allow rule 1: groups staff');
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveCount(0);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await summary.getByRole('button', { name: 'Copy as YAML' }).click();
  await expect(summary.getByRole('button', { name: 'Copied' })).toBeVisible();
  const copied = String(await page.evaluate('navigator.clipboard.readText()'));
  expect(copied).toMatch(/^apps:\n {2}- id: whoami\n/);
  expect(copied).toContain('allow:');
  expect(copied).not.toContain('source');
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('config-app-summary.png'), fullPage: true });
  await expect(page.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Delete app' })).toHaveCount(0);

  // A new app: what is wrong is said beside each field, in words, from the first submit.
  await adminNav(page).getByRole('link', { name: 'Apps' }).click();
  await page.getByRole('link', { name: 'New app' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps/new`);
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(page.getByRole('alert')).toContainText('Fix the fields marked below.');
  await expect(page.getByRole('textbox', { name: 'Id' })).toHaveAccessibleDescription(/Enter an id\./);
  await expect(page.getByRole('textbox', { name: 'Id' })).toBeFocused();
  await expect(page.getByRole('textbox', { name: 'Name' })).toHaveAccessibleDescription('Enter a name.');
  await expect(page.getByText('Add at least one allow rule: with none, nobody can open the app.')).toBeVisible();
  await expect(page.getByText(/\w+\[\d\]|publicUrl:|upstream:/)).toHaveCount(0);
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('new-app-errors.png'), fullPage: true });
  // An id that is taken, a rule value the policy language does not have, an upstream that is no URL.
  await page.getByRole('textbox', { name: 'Id' }).fill('whoami');
  await page.getByRole('textbox', { name: 'Name' }).fill('Reports');
  await page.getByRole('textbox', { name: 'Public URL' }).fill(reportsUrl());
  await page.getByRole('textbox', { name: 'Upstream' }).fill('not a url');
  await page.getByRole('button', { name: 'Add allow rule' }).click();
  const rule = page.getByRole('group', { name: 'Allow rule 1' });
  const kind = rule.getByRole('combobox', { name: 'Kind' });
  await expect(kind).toHaveValue('Groups');
  await kind.click();
  await page.getByRole('option', { name: 'Roles', exact: true }).click();
  await rule.getByRole('textbox', { name: 'Roles' }).fill('staff');
  // Checked in the browser first...
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(page.getByRole('textbox', { name: 'Upstream' })).toHaveAccessibleDescription(/Must be an absolute http\(s\) URL\./);
  await expect(rule.getByRole('textbox', { name: 'Roles' })).toHaveAccessibleDescription(/Roles \(value 1\): must be one of: admin\./);
  await expect(page.getByRole('textbox', { name: 'Id' })).not.toHaveAttribute('aria-invalid', 'true');
  // ...then by the server (the id is a config app's), beside the field too.
  await page.getByRole('textbox', { name: 'Upstream' }).fill(process.env.DEMO_APP_URL!);
  await kind.click();
  await page.getByRole('option', { name: 'Groups', exact: true }).click();
  await rule.getByRole('textbox', { name: 'Groups' }).fill('admins');
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(page.getByRole('textbox', { name: 'Id' })).toHaveAccessibleDescription(/An app in the configuration file already has the id "whoami"\. Choose another\./);
  await expect(page.getByRole('alert').filter({ hasText: 'Fix the fields marked below.' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Id' })).toBeFocused();
  await page.getByRole('textbox', { name: 'Id' }).fill('reports');
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'App created' })).toContainText(`Reports is live at ${reportsUrl()}`);
  // Created, it opens on its own page.
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps/reports`);
  await expect(page.getByRole('heading', { level: 1, name: 'Reports' })).toBeVisible();
  await adminNav(page).getByRole('link', { name: 'Apps' }).click();
  await expect(appRow(page, 'reports')).toContainText('Console');
  await expect(appRow(page, 'reports')).toContainText('Allow: groups admins');
  await expect(appRow(page, 'reports').getByRole('link', { name: reportsUrl() })).toBeVisible();

  // The policy tester names the deciding rule.
  await appRow(page, 'reports').getByRole('link', { name: 'Reports', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Reports' })).toBeVisible();
  await expect(page.getByRole('group', { name: 'Allow rule 1' }).getByRole('textbox', { name: 'Groups' })).toHaveValue('admins');
  const denied = await testPolicyFor(page, 'bob', 'bob@example.com');
  await expect(denied).toContainText('Denied');
  await expect(denied).toContainText('no allow rule matched');
  await expectAccessible(page);
  const allowed = await testPolicyFor(page, 'alice', 'alice@example.com');
  await expect(allowed).toContainText('Allowed');
  await expect(allowed).toContainText('Allowed by allow rule 1: groups admins.');
  // The draft is tested before it is saved: a deny rule for alice, not saved yet, decides.
  await page.getByRole('button', { name: 'Add deny rule' }).click();
  const denyRule = page.getByRole('group', { name: 'Deny rule 1' });
  await denyRule.getByRole('combobox', { name: 'Kind' }).click();
  await page.getByRole('option', { name: 'Emails', exact: true }).click();
  await denyRule.getByRole('textbox', { name: 'Emails' }).fill('alice@example.com');
  // alice is still picked in the tester: test again.
  const tester = page.getByRole('region', { name: 'Test this policy' });
  await tester.getByRole('button', { name: 'Test', exact: true }).click();
  const drafted = tester.getByTestId('policy-test-result');
  await expect(drafted).toContainText('Denied by deny rule 1: emails alice@example.com.');
  await page.screenshot({ path: test.info().outputPath('policy-draft-test.png'), fullPage: true });
  await denyRule.getByRole('button', { name: 'Remove deny rule 1' }).click();
  // Compression is off unless chosen (BREACH); access tokens go only to the providers named.
  await expect(page.getByRole('switch', { name: 'Compress answers' })).not.toBeChecked();
  await page.getByRole('combobox', { name: 'Pass access tokens from' }).click();
  await page.getByRole('option', { name: 'Development IdP (dev)' }).click();
  await page.keyboard.press('Escape');
  // Save confirms.
  await page.getByRole('textbox', { name: 'Name' }).fill('Reports');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'Saved' })).toContainText('Reports is saved');
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps`);
  await appRow(page, 'reports').getByRole('link', { name: 'Reports', exact: true }).click();
  await expect(page.getByText('Development IdP (dev)', { exact: true }).filter({ visible: true })).toHaveCount(1);
  expect((await (await page.request.get(`${portalUrl()}/api/admin/apps`)).json()).apps.find((app: { id: string }) => app.id === 'reports')).toMatchObject({ passAccessToken: ['dev'], compress: false });
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page);
  await page.emulateMedia({ colorScheme: 'light' });

  // The policy guards the new host at once.
  await openApp(bob, `${reportsUrl()}/`, 'bob@example.com', 'bob', bob.getByRole('heading', { name: 'Access denied' }));
  // The denied page in the shared error layout: on a phone its card keeps a margin from the screen's edges.
  await bob.setViewportSize({ width: 375, height: 740 });
  const card = await bob.getByRole('main').boundingBox();
  expect(card?.x).toBeGreaterThanOrEqual(16);
  expect((card?.x ?? 0) + (card?.width ?? 0)).toBeLessThanOrEqual(375 - 16);
  await expectAccessible(bob);
  await bob.screenshot({ path: test.info().outputPath('denied-phone.png') });
  await bob.setViewportSize({ width: 1280, height: 720 });
  await openApp(page, `${reportsUrl()}/`, 'alice@example.com', 'alice', page.getByRole('heading', { level: 1, name: 'whoami' }));
  await expect(page.getByText('alice@example.com').first()).toBeVisible();
  // Created in the console without "Preserve Host", the demo still checks the assertion's audience and it holds.
  await expect(page.getByText('Assertion verified')).toBeVisible();

  // Deleted, after confirming.
  await page.goto(`${portalUrl()}/admin/apps/reports`);
  await page.getByRole('button', { name: 'Delete app' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete Reports?' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps`);
  await expect(appRow(page, 'whoami')).toBeVisible();
  await expect(appRow(page, 'reports')).toHaveCount(0);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page);
});

test('an app nginx or Caddy serves needs no upstream; its page shows the proxy configuration for it and whom Gatehouse believes', async ({ browser }) => {
  const page = await signedInBrowser(browser, 'alice@example.com', 'alice');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  const intranet = `http://intranet.localhost:8080`;
  await page.goto(`${portalUrl()}/admin/apps/new`);
  await page.getByRole('textbox', { name: 'Id' }).fill('intranet');
  await page.getByRole('textbox', { name: 'Name' }).fill('Intranet');
  await page.getByRole('textbox', { name: 'Public URL' }).fill(intranet);
  // Served by the operator's proxy: no upstream to give, and none of Gatehouse's own proxying options.
  await page.getByRole('radio', { name: 'nginx, Caddy or Traefik' }).check();
  await expect(page.getByRole('textbox', { name: 'Upstream' })).toHaveCount(0);
  await expect(page.getByRole('switch', { name: 'WebSockets' })).toHaveCount(0);
  await expect(page.getByRole('switch', { name: 'CORS preflight' })).toBeVisible();
  await page.getByRole('button', { name: 'Add allow rule' }).click();
  await page.getByRole('group', { name: 'Allow rule 1' }).getByRole('textbox', { name: 'Groups' }).fill('staff');
  await page.getByRole('button', { name: 'Create app' }).click();

  await expect(page).toHaveURL(`${portalUrl()}/admin/apps/intranet`);
  await expect(page.getByRole('radio', { name: 'nginx, Caddy or Traefik' })).toBeChecked();
  const setup = page.getByRole('region', { name: 'Behind nginx, Caddy or Traefik' });
  // The suite's Gatehouse leaves trustedProxies out: development mode believes proxies on this machine.
  await expect(setup).toContainText('proxies on this machine');
  await expect(setup).toContainText('127.0.0.0/8, ::1');
  const gatehouse = `127.0.0.1:${new URL(portalUrl()).port}`;
  await expect(setup).toContainText(`Gatehouse at ${gatehouse}`);
  const nginx = setup.getByRole('region', { name: '/etc/nginx/conf.d/gatehouse-intranet.conf' });
  await expect(nginx).toContainText('listen 8080;');
  await expect(nginx).toContainText('server_name intranet.localhost;');
  await expect(nginx).toContainText('proxy_pass http://gatehouse/.gatehouse/auth/intranet;');
  await expect(nginx).toContainText('error_page 401 403 = @gatehouse_answer;');
  // Where Gatehouse is, once for every app: the shared file's pool of kept-alive connections.
  await expect(setup.getByRole('region', { name: '/etc/nginx/conf.d/gatehouse.conf (once, shared by every app)' })).toContainText(`server ${gatehouse};`);
  const nginxGuide = setup.getByRole('link', { name: 'docs/deploy/nginx.md' });
  await expect(nginxGuide).toHaveAttribute('href', '/docs/deploy/nginx.md');
  expect(await (await page.request.get(`${portalUrl()}/docs/deploy/nginx.md`)).text()).toContain('error_page 401 403 = @gatehouse_answer');
  await setup.getByRole('button', { name: 'Copy /etc/nginx/conf.d/gatehouse-intranet.conf' }).click();
  expect(String(await page.evaluate('navigator.clipboard.readText()'))).toBe(await nginx.textContent());
  await setup.getByRole('tab', { name: 'Caddy' }).click();
  await expect(setup.getByRole('region', { name: 'A site block of /etc/caddy/Caddyfile' })).toContainText(`${intranet} {`);
  await setup.getByRole('tab', { name: 'Traefik' }).click();
  await expect(setup.getByRole('region', { name: '/etc/traefik/dynamic/gatehouse-intranet.yml' })).toContainText(
    `address: http://${gatehouse}/.gatehouse/forward-auth/intranet`,
  );
  await expectAccessible(page);
  await page.screenshot({ path: test.info().outputPath('proxy-setup.png'), fullPage: true });
  // On a phone, the configuration scrolls within its block: the page itself never scrolls sideways.
  for (const width of [320, 375]) {
    await page.setViewportSize({ width, height: 740 });
    await expect(setup.getByRole('tab', { name: 'Traefik' })).toBeVisible();
    expect(await page.evaluate('document.documentElement.scrollWidth'), `${width} px`).toBeLessThanOrEqual(width);
  }
  await page.screenshot({ path: test.info().outputPath('proxy-setup-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 720 });

  // The list says who serves it.
  await adminNav(page).getByRole('link', { name: 'Apps' }).click();
  await expect(appRow(page, 'intranet')).toContainText('Its own proxy (forward-auth)');

  await page.goto(`${portalUrl()}/admin/apps/intranet`);
  await page.getByRole('button', { name: 'Delete app' }).click();
  await page.getByRole('dialog', { name: 'Delete Intranet?' }).getByRole('button', { name: 'Delete' }).click();
  await expect(page).toHaveURL(`${portalUrl()}/admin/apps`);
});
