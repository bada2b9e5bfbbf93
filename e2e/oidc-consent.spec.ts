import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { expectAccessible, portalUrl, signInWith } from './support/fixtures.js';

/**
 * The consent page of a third-party app (`oidc.thirdParty`), in Chromium: a person signed in to
 * Gatehouse opens the app's authorization request, sees what it asks, allows (the app gets a code) or
 * denies (the app gets access_denied). No serious axe violation; screenshots at a laptop's 1280×800 and
 * a phone's 375×740 (`consent-<width>.png` in the test's output folder). The app is made in the console
 * for this test; its redirect URI is a small listener of the test's own, which only says it was reached.
 */

const SIZES = [
  { width: 1280, height: 800 },
  { width: 375, height: 740 },
] as const;

/** The app's redirect URI: a listener that answers a plain page (the test reads what Gatehouse sent in the address). */
let rp: Server;
let rpOrigin: string;

test.beforeAll(async () => {
  rp = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Board</title><h1>Board</h1>'));
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
  rpOrigin = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => rp?.close(resolve));
});

const board = () => ({
  id: 'e2e-consent-board',
  name: 'Community Board',
  publicUrl: 'https://board.example.com',
  guard: false,
  oidc: { authentication: 'none', redirectUris: [`${rpOrigin}/oauth/callback`], scopes: ['openid', 'profile', 'email'], thirdParty: true },
  policy: { allow: [{ anyUser: true }] },
});
const BOARD_ID = 'e2e-consent-board';

async function adminRequest(page: Page, method: 'POST' | 'DELETE', path: string, data?: unknown) {
  const csrf = ((await (await page.request.get(`${portalUrl()}/api/csrf`)).json()) as { csrfToken: string }).csrfToken;
  return page.request.fetch(`${portalUrl()}${path}`, { method, headers: { origin: portalUrl(), 'x-csrf-token': csrf }, ...(data ? { data } : {}) });
}

/** The app's authorization request (a public client: PKCE). */
function authorizationUrl(state: string): string {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${portalUrl()}/oidc/authorize`);
  url.search = new URLSearchParams({
    client_id: BOARD_ID,
    response_type: 'code',
    scope: 'openid profile email',
    redirect_uri: `${rpOrigin}/oauth/callback`,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  return url.href;
}

async function shoot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await expectAccessible(page, { soft: true });
    await page.screenshot({ path: testInfo.outputPath(`${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(SIZES[0]);
}

test('a third-party app asks for consent: the page says what it asks; Allow sends a code, Deny access_denied', async ({ page }, testInfo) => {
  await page.setViewportSize(SIZES[0]);
  await signInWith(page, 'Development IdP', 'alice@example.com', 'alice');
  await adminRequest(page, 'DELETE', `/api/admin/apps/${BOARD_ID}`);
  const created = await adminRequest(page, 'POST', '/api/admin/apps', board());
  expect(created.status(), await created.text()).toBe(201);
  try {
    await page.goto(authorizationUrl('first'));
    await expect(page).toHaveURL(/\/authorize\/[\w-]+$/);
    const card = page.getByRole('main');
    await expect(card.getByRole('heading', { level: 1, name: 'Sign in to Community Board?' })).toBeVisible();
    await expect(card).toContainText(`Community Board at ${rpOrigin} asks to sign you in with Gatehouse.`);
    await expect(card).toContainText('your name and email address');
    await expect(card).toContainText('You are signed in as Alice Example (alice@example.com).');
    await shoot(page, testInfo, 'consent');

    await card.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.origin === rpOrigin);
    const allowed = new URL(page.url());
    expect(allowed.searchParams.get('code')).toBeTruthy();
    expect(allowed.searchParams.get('state')).toBe('first');

    // The same session, the same scopes: its grant covers them, nobody is asked again.
    await page.goto(authorizationUrl('again'));
    await page.waitForURL((url) => url.origin === rpOrigin);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();

    // The app asks for consent again (prompt=consent): asked again; Deny answers the app access_denied.
    await page.goto(authorizationUrl('more').replace('scope=openid+profile+email', 'scope=openid+profile+email&prompt=consent'));
    await expect(page).toHaveURL(/\/authorize\/[\w-]+$/);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((url) => url.origin === rpOrigin);
    const denied = new URL(page.url());
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('more');

    // A step answered already (or unknown, or another session's): nothing to answer, said plainly.
    await page.goto(`${portalUrl()}/authorize/Zq3VwBvY8yPe0uKcHnXg1`);
    await expect(page.getByRole('heading', { level: 1, name: 'Nothing to answer here' })).toBeVisible();
    await expectAccessible(page, { soft: true });
  } finally {
    const deleted = await adminRequest(page, 'DELETE', `/api/admin/apps/${BOARD_ID}`);
    expect(deleted.ok(), await deleted.text()).toBe(true);
  }
});
