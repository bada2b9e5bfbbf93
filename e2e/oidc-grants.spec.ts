import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { OpStore } from '../packages/server/src/provide/opStore.js';
import type { Database } from '../packages/server/src/storage/schema.js';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The apps signed in with Gatehouse, in the account center and on an app's page in the console, in
 * Chromium: what each shows, their sign-outs, no serious axe violation, and screenshots at a laptop's
 * 1280×800 and a phone's 375×740 (`<screen>-<width>.png` in the test's output folder). The grants are
 * recorded in the OpenID Provider's store, in the person's real session, as its login step records them.
 */

const SIZES = [
  { width: 1280, height: 800 },
  { width: 375, height: 740 },
] as const;

/** The running Gatehouse's database (SQLite, in WAL mode: a second writer waits its turn). */
function openStore(): { store: OpStore; close(): Promise<void> } {
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(path.join(process.env.E2E_STACK_DATA_DIR!, 'gatehouse.db'), { timeout: 5000 }) }) });
  return { store: new OpStore(db), close: () => db.destroy() };
}

async function shoot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await expectAccessible(page, { soft: true });
    await page.screenshot({ path: testInfo.outputPath(`${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(SIZES[0]);
}

/** An app that signs people in with OpenID Connect alone, made in the console for this test. */
const WIKI = {
  id: 'e2e-grants-wiki',
  name: 'Wiki',
  publicUrl: 'https://wiki.example.com',
  guard: false,
  oidc: { redirectUris: ['https://wiki.example.com/oauth/callback'] },
  policy: { allow: [{ anyUser: true }] },
};

async function adminRequest(page: Page, method: 'POST' | 'DELETE', path: string, data?: unknown) {
  const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
  return page.request.fetch(`${portalUrl()}${path}`, { method, headers: { origin: portalUrl(), 'x-csrf-token': csrf }, ...(data ? { data } : {}) });
}

test('the account page and an app’s page list the apps signed in with Gatehouse, and sign them out', async ({ page }, testInfo) => {
  await page.setViewportSize(SIZES[0]);
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await expect(page).toHaveURL(`${portalUrl()}/account`);
  const me = (await (await page.request.get(`${portalUrl()}/api/session`)).json()) as { user: { id: string }; session: { id: string } };
  await adminRequest(page, 'DELETE', `/api/admin/apps/${WIKI.id}`);
  const created = await adminRequest(page, 'POST', '/api/admin/apps', WIKI);
  expect(created.status(), await created.text()).toBe(201);

  const { store, close } = openStore();
  const run = Date.now().toString(36);
  try {
    const grant = (appId: string, scopes: string[]) =>
      store.recordGrant({
        grantId: `e2e-${run}-${appId}`,
        clientId: appId,
        appId,
        userId: me.user.id,
        sessionId: me.session.id,
        sid: `sid-${run}-${appId}`,
        subject: me.user.id,
        scopes,
        expiresAt: Date.now() + 3_600_000,
      });
    await grant(WIKI.id, ['openid', 'profile', 'email', 'groups']);
    await grant('admin-demo', ['openid', 'email', 'offline_access']);
  } finally {
    await close();
  }

  // The account center: the session lists its apps in words, and says what signing out ends.
  await page.goto(`${portalUrl()}/account`);
  const sessions = page.getByRole('region', { name: 'Sessions' });
  // This browser's session (alice may have others from elsewhere in the suite, with apps of their own).
  const appsList = page.getByRole('list', { name: 'Apps signed in with Gatehouse in this session' });
  // (The badge exactly: "Revoking this session also signs you out of…" on the others contains the words too.)
  const current = sessions.getByRole('listitem').filter({ has: page.getByText('This session', { exact: true }) }).filter({ has: appsList });
  const apps = current.getByRole('list', { name: 'Apps signed in with Gatehouse in this session' });
  await expect(apps.getByRole('listitem')).toHaveCount(2);
  await expect(apps.getByRole('listitem').filter({ hasText: 'Wiki' })).toContainText('It can see your name, email address and groups');
  await expect(apps.getByRole('listitem').filter({ hasText: 'Admin demo' })).toContainText('It can see your email address, also while you are away');
  await expect(sessions).toContainText('Signing out also signs you out of Admin demo and Wiki.');
  await shoot(page, testInfo, 'account');

  await apps.getByRole('button', { name: 'Sign out of Admin demo' }).click();
  await expect(sessions.getByRole('status').filter({ hasText: 'Signed out of Admin demo.' })).toBeVisible();
  await expect(apps.getByRole('listitem')).toHaveCount(1);
  await expect(page.getByRole('region', { name: 'Recent activity' }).getByText('You signed out of Admin demo').first()).toBeVisible();

  // The console: who is signed in to the app, then everyone signed out of it.
  await page.goto(`${portalUrl()}/admin/apps/${WIKI.id}`);
  const section = page.getByTestId('app-grants');
  await expect(section.getByRole('row').filter({ hasText: 'alice@example.com' })).toContainText('their name, email address and groups');
  await shoot(page, testInfo, 'app-page');

  await section.getByRole('button', { name: 'Sign everyone out of this app' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign everyone out of Wiki?' });
  await dialog.getByRole('button', { name: 'Sign everyone out' }).click();
  await expect(dialog).toBeHidden();
  await expect(section.getByText('Nobody is signed in with Gatehouse')).toBeVisible();
  await expect(section.getByRole('status').filter({ hasText: /^Ended \d+ sign-ins? to Wiki\.$/ })).toBeVisible();

  const deleted = await adminRequest(page, 'DELETE', `/api/admin/apps/${WIKI.id}`);
  expect(deleted.ok(), await deleted.text()).toBe(true);
});
