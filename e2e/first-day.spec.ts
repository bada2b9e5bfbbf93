import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { freePort, signInAtApp, startCaddy, startNginx, type ProxyOptions, type RunningProxy } from './support/proxies.js';
import { freePortBlock, runGatehouse } from './support/stack.js';

/**
 * An operator's first day, from the docs alone: docs/deploy/README.md's "Try it on the default start",
 * step by step, once behind Debian's nginx and once behind Debian's Caddy. Gatehouse starts from the
 * guide's own gatehouse.yaml (read from the guide: `extends: development-defaults` and an app without
 * upstream), moved to free ports the way the guide's "second Gatehouse" says (`listen.port`); no
 * trustedProxies (development mode believes loopback). alice adds the admins-only app in
 * the console and copies its proxy block from the app's page; the proxy runs the shipped templates and
 * that copy. bob reaches the staff app, is refused the admins-only one with Gatehouse's own page, and
 * "Switch account" there lets alice in.
 */

const guide = readFileSync(new URL('../docs/deploy/README.md', import.meta.url), 'utf8');

/** The guide's gatehouse.yaml: the first yaml block of "Try it on the default start", out of its list item. */
function guideConfig(): string {
  const section = guide.slice(guide.indexOf('## Try it on the default start'));
  const block = /^( *)```yaml\n([\s\S]*?)^ *```/m.exec(section);
  if (!block) throw new Error('docs/deploy/README.md has no yaml block under "Try it on the default start"');
  const indent = block[1]!.length;
  return block[2]!
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .join('\n');
}

const proxies: ReadonlyArray<{ name: string; tab: string; file: string; start: (options: ProxyOptions) => Promise<RunningProxy> }> = [
  { name: 'nginx', tab: 'nginx', file: '/etc/nginx/conf.d/gatehouse-hello-admins.conf', start: startNginx },
  { name: 'Caddy', tab: 'Caddy', file: 'A site block of /etc/caddy/Caddyfile', start: startCaddy },
];

for (const { name, tab, file, start } of proxies) {
  test.describe(`the default start behind ${name}, from docs/deploy/ alone`, () => {
    let port = 0;
    let proxyPort = 0;
    let gatehouse: { stop(): Promise<void> } | undefined;
    let proxy: RunningProxy | undefined;
    const portal = () => `http://localhost:${port}`;
    const hello = () => `http://hello.localhost:${proxyPort}`;
    const helloAdmins = () => `http://hello-admins.localhost:${proxyPort}`;

    test.beforeAll(async () => {
      // The default start's layout: the portal, the development IdPs (+1, +3), the demo app (+2), metrics (+9).
      port = await freePortBlock([1, 2, 3, 9]);
      proxyPort = await freePort();
      const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-first-day-'));
      const configFile = path.join(dir, 'gatehouse.yaml');
      const config = guideConfig().replaceAll(':8080', `:${proxyPort}`);
      expect(config).toMatch(/^extends: development-defaults$/m);
      expect(config).not.toMatch(/^\s*(upstream|trustedProxies):/m);
      // A second Gatehouse beside the suite's, as the guide's last paragraph says: its own port (its data
      // then goes to ./data-<port>, in the folder it is started from: the test's own).
      writeFileSync(configFile, `${config}\nlisten: { port: ${port} }\nlog: { level: warn, format: json }\n`);
      gatehouse = await runGatehouse(dir, configFile, port + 9);
    });

    test.afterAll(async () => {
      try {
        await proxy?.stop();
      } finally {
        await gatehouse?.stop();
      }
    });

    // eslint-disable-next-line no-empty-pattern -- Playwright hooks take their fixtures first; none needed
    test.afterEach(async ({}, testInfo) => {
      if (proxy && testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach('proxy log', { body: proxy.logs(), contentType: 'text/plain' });
        await testInfo.attach('proxy config', { body: proxy.config, contentType: 'text/plain' });
      }
    });

    test('an app from the file and one from the console, a person let in, a person refused with Gatehouse’s page, Switch account', async ({ browser, request }) => {
      const demo = `127.0.0.1:${port + 2}`;

      // Step 2: alice adds the admins-only app in the console, served by the proxy: no upstream.
      const alice = await personAt(browser);
      await alice.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await alice.goto(`${portal()}/sign-in`);
      await alice.getByRole('link', { name: 'Sign in with Development IdP' }).or(alice.getByRole('button', { name: 'Sign in with Development IdP' })).click();
      await alice.locator('input[name="login"]').fill('alice@example.com');
      await alice.locator('input[name="password"]').fill('alice');
      await alice.getByRole('button', { name: 'Sign in' }).click();
      await expect(alice).toHaveURL(`${portal()}/account`);
      await alice.goto(`${portal()}/admin/apps/new`);
      await alice.getByRole('textbox', { name: 'Id' }).fill('hello-admins');
      await alice.getByRole('textbox', { name: 'Name' }).fill('Hello admins');
      await alice.getByRole('textbox', { name: 'Public URL' }).fill(helloAdmins());
      await alice.getByRole('radio', { name: 'nginx, Caddy or Traefik' }).check();
      await expect(alice.getByRole('textbox', { name: 'Upstream' })).toHaveCount(0);
      await alice.getByRole('button', { name: 'Add allow rule' }).click();
      await alice.getByRole('group', { name: 'Allow rule 1' }).getByRole('textbox', { name: 'Groups' }).fill('admins');
      await alice.getByRole('button', { name: 'Create app' }).click();
      // She lands on the new app's page, which says whom Gatehouse believes and shows the proxy's block.
      await expect(alice).toHaveURL(`${portal()}/admin/apps/hello-admins`);
      await expect(alice.getByRole('heading', { level: 1, name: 'Hello admins' })).toBeVisible();
      const setup = alice.getByRole('region', { name: 'Behind nginx, Caddy or Traefik' });
      await expect(setup).toContainText('proxies on this machine');
      await setup.getByRole('tab', { name: tab }).click();
      await setup.getByRole('button', { name: `Copy ${file}` }).click();
      const copied = String(await alice.evaluate('navigator.clipboard.readText()'));
      expect(copied).toContain('/.gatehouse/forward-auth/hello-admins');
      expect(copied).toContain('APP_UPSTREAM');

      // Step 3: the proxy, with the shipped template for hello and the console's block for hello-admins,
      // where the app is the demo app (the console says to replace APP_UPSTREAM).
      proxy = await start({
        port: proxyPort,
        gatehousePort: port,
        apps: [{ id: 'hello', host: 'hello.localhost', port: proxyPort, upstream: demo }],
        // (And, as every block the tests run, on loopback only: nginx's `listen 8080` would take every address.)
        copiedBlocks: [copied.replace(/\bAPP_UPSTREAM\b/g, demo).replace(`listen ${proxyPort};`, `listen 127.0.0.1:${proxyPort};`)],
      });

      // Step 4: bob signs in at hello through the default start's Development IdP; the demo app shows him.
      const bob = await personAt(browser);
      await signInAtApp(bob, `${hello()}/`, portal(), 'bob@example.com', 'bob');
      await expect(bob.getByRole('row', { name: /^X-Gatehouse-Email / })).toContainText('bob@example.com');
      await expect(bob.getByText('Assertion verified')).toBeVisible();

      // At hello-admins he is refused with Gatehouse's own page, not the proxy's bare 403.
      const [refusal] = await Promise.all([
        bob.waitForResponse((response) => response.url() === `${helloAdmins()}/` && response.status() !== 302 && response.status() !== 303),
        bob.goto(`${helloAdmins()}/`),
      ]);
      expect(refusal.status()).toBe(403);
      await expect(bob.getByRole('heading', { name: 'Access denied' })).toBeVisible();
      await expect(bob.getByRole('main')).toContainText('bob@example.com');
      await expect(bob.getByRole('main')).toContainText('Hello admins');
      await expect(bob.getByRole('button', { name: 'Sign out' })).toBeVisible();
      await bob.screenshot({ path: test.info().outputPath(`denied-behind-${name}.png`) });

      // Switch account: the session ends, and the IdP lets him sign in as someone else; alice gets in.
      await bob.getByRole('button', { name: 'Switch account' }).click();
      await expect(bob).toHaveURL((url) => url.origin === new URL(portal()).origin && url.pathname === '/sign-in');
      await bob.getByRole('link', { name: 'Sign in with Development IdP' }).or(bob.getByRole('button', { name: 'Sign in with Development IdP' })).click();
      await bob.locator('input[name="login"]').fill('alice@example.com');
      await bob.locator('input[name="password"]').fill('alice');
      await bob.getByRole('button', { name: 'Sign in' }).click();
      await bob.waitForURL(`${helloAdmins()}/`);
      await expect(bob.getByRole('row', { name: /^X-Gatehouse-Email / })).toContainText('alice@example.com');

      // A client that is not a browser gets the status alone: 401 signed out, through the proxy.
      const api = await request.get(`${proxy.url}/`, { headers: { Host: `hello-admins.localhost:${proxyPort}`, Accept: 'application/json' }, maxRedirects: 0 });
      expect(api.status()).toBe(401);
    });
  });
}

/** A browser of its own, as another person's would be. */
async function personAt(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  return context.newPage();
}
