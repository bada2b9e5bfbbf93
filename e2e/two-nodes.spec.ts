import { expect, test, type Browser, type BrowserContext, type Page, type Response } from '@playwright/test';
import { NODE_COOKIE, send, servedBy, startCluster, type Cluster, type NodeName } from './support/cluster.js';

/**
 * Two Gatehouse nodes on one PostgreSQL behind nginx (support/cluster.ts), in Debian's Chromium. Each
 * step is pinned to one node, so every scenario needs what one node wrote or changed to reach the other:
 * the session itself through the database, and what the other node keeps in memory (its session cache,
 * its apps, its open WebSockets) through the change notifications between nodes. Without them each of
 * these fails: the other node would go on serving a revoked session from its cache, keep the old
 * policy, and keep the socket open.
 *
 * alice (groups staff, admins) is an admin; bob (staff) is not.
 */

let cluster: Cluster;

test.beforeAll(async () => {
  cluster = await startCluster();
});

test.afterAll(async () => {
  await cluster?.stop();
});

// The cluster's logs go with a failure report (Playwright wants the fixtures destructured, even none).
// eslint-disable-next-line no-empty-pattern
test.afterEach(async ({}, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach('cluster logs', { body: cluster.logs(), contentType: 'text/plain' });
});

const accountUrl = () => `${cluster.portalUrl}/account`;

/** From now on every request of this browser, on every host of the cluster, goes to `node`. */
async function pinTo(context: BrowserContext, node: NodeName): Promise<void> {
  const hosts = [cluster.portalUrl, cluster.appUrl('whoami'), cluster.appUrl('reports')];
  await context.addCookies(hosts.map((url) => ({ name: NODE_COOKIE, value: node, url })));
}

/** The node that answered a navigation (nginx names it). */
const nodeOf = (response: Response | null) => servedBy(cluster, response?.headers()['x-served-by']);

/** A fresh browser pinned to `node`, signed in with the Development IdP's login form, on /account. */
async function signedIn(browser: Browser, node: NodeName, login: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  await pinTo(context, node);
  const page = await context.newPage();
  const callback = page.waitForResponse((response) => new URL(response.url()).pathname === '/.gatehouse/callback/dev');
  await page.goto(`${cluster.portalUrl}/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(accountUrl());
  // The session was made by that node.
  expect(nodeOf(await callback)).toBe(node);
  return page;
}

/** Opens an app page (the app host hands the browser through the portal's handshake) and expects the app. */
async function openApp(page: Page, url: string, node: NodeName, email: string): Promise<void> {
  const response = await page.goto(url);
  expect(nodeOf(response)).toBe(node);
  await expect(page).toHaveURL(url);
  await expect(page.getByRole('heading', { level: 1, name: 'whoami' })).toBeVisible();
  await expect(page.getByText(email).first()).toBeVisible();
}

/**
 * A request with this browser's cookies for that URL, sent from the test (Node does not resolve
 * *.localhost as browsers do: `send` connects to nginx's loopback address with the URL's Host).
 */
async function asBrowser(page: Page, url: string) {
  const cookies = await page.context().cookies(url);
  const answer = await send(url, { headers: { cookie: cookies.map(({ name, value }) => `${name}=${value}`).join('; '), accept: 'application/json' } });
  return { ...answer, node: servedBy(cluster, String(answer.headers['x-served-by'] ?? '')) };
}

/**
 * On /account of `page`, revokes the other session of the same person (the one that is not this one);
 * returns when the answer arrived (ms since the epoch).
 */
async function revokeOtherSession(page: Page, node: NodeName): Promise<number> {
  const response = await page.goto(accountUrl());
  expect(nodeOf(response)).toBe(node);
  const sessions = page.getByRole('region', { name: 'Sessions' }).getByRole('listitem');
  await expect(sessions).toHaveCount(2);
  const revoked = page.waitForResponse((answer) => answer.request().method() === 'DELETE' && new URL(answer.url()).pathname.startsWith('/api/me/sessions/'));
  await sessions.filter({ hasNotText: 'This session' }).getByRole('button', { name: /^Revoke session / }).click();
  const answer = await revoked;
  const answeredAt = Date.now();
  expect(answer.status()).toBe(204);
  expect(nodeOf(answer)).toBe(node);
  await expect(sessions).toHaveCount(1);
  return answeredAt;
}

/**
 * Signs each browser out (from /account, as a person does) and closes it: a later test counts the
 * sessions on alice's account page. A browser whose session was revoked is only closed.
 */
async function signOutAll(...pages: Page[]): Promise<void> {
  for (const page of pages) {
    if ((await page.request.get(`${cluster.portalUrl}/api/session`)).status() === 200) {
      await page.goto(accountUrl());
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await expect(page).toHaveURL(`${cluster.portalUrl}/signed-out`);
    }
    await page.context().close();
  }
}

test('signed in through node A, the account page and a guarded app work through node B', async ({ browser }) => {
  const page = await signedIn(browser, 'a', 'alice@example.com', 'alice');

  await pinTo(page.context(), 'b');
  const account = await page.goto(accountUrl());
  expect(nodeOf(account)).toBe('b');
  await expect(page).toHaveURL(accountUrl());
  await expect(page.getByRole('region', { name: 'Sessions' }).getByRole('listitem')).toHaveCount(1);
  await expect(page.getByRole('region', { name: 'Sessions' })).toContainText('This session');
  const session = await page.request.get(`${cluster.portalUrl}/api/session`);
  expect(session.status()).toBe(200);
  expect(servedBy(cluster, session.headers()['x-served-by'])).toBe('b');
  expect(((await session.json()) as { user: { email: string } }).user.email).toBe('alice@example.com');

  // The app host's handshake, the app's own cookie and the signed assertion, all on node B; the app
  // verifies the assertion against the keys both nodes publish.
  await openApp(page, `${cluster.appUrl('whoami')}/hello`, 'b', 'alice@example.com');
  await expect(page.getByText('Assertion verified')).toBeVisible();
  await signOutAll(page);
});

// Threat: a session revoked on one node still let in by another node's session cache (up to its expiry).
test('a session revoked on node A is signed out at its very next request on node B', async ({ browser }) => {
  const admin = await signedIn(browser, 'a', 'alice@example.com', 'alice');
  const victim = await signedIn(browser, 'a', 'alice@example.com', 'alice');
  // Node B knows the second session well: the portal and the app host each have it in its cache.
  await pinTo(victim.context(), 'b');
  await openApp(victim, `${cluster.appUrl('whoami')}/`, 'b', 'alice@example.com');
  expect((await victim.request.get(`${cluster.portalUrl}/api/session`)).status()).toBe(200);
  expect(await asBrowser(victim, `${cluster.appUrl('whoami')}/?format=json`)).toMatchObject({ status: 200, node: 'b' });

  await revokeOtherSession(admin, 'a');

  // The next request of that browser, on node B: signed out, at the portal and at the app.
  const session = await victim.request.get(`${cluster.portalUrl}/api/session`);
  expect(servedBy(cluster, session.headers()['x-served-by'])).toBe('b');
  expect(session.status()).toBe(401);
  const app = await asBrowser(victim, `${cluster.appUrl('whoami')}/?format=json`);
  expect(app.node).toBe('b');
  expect(app.status).toBe(401);
  await victim.goto(`${cluster.appUrl('whoami')}/`);
  await expect(victim).toHaveURL((url) => url.origin === cluster.portalUrl && url.pathname === '/sign-in');
  await signOutAll(admin, victim);
});

// Threat: a policy tightened in the console on one node still enforced the old way by another node.
test('a policy changed in the console on node B applies on node A at once', async ({ browser }) => {
  const admin = await signedIn(browser, 'b', 'alice@example.com', 'alice');
  const bob = await signedIn(browser, 'a', 'bob@example.com', 'bob');
  const reports = `${cluster.appUrl('reports')}/`;

  // A console app, made on node B: staff may open it.
  const csrf = (await (await admin.request.get(`${cluster.portalUrl}/api/csrf`)).json()) as { csrfToken: string };
  const created = await admin.request.post(`${cluster.portalUrl}/api/admin/apps`, {
    headers: { origin: cluster.portalUrl, 'x-csrf-token': csrf.csrfToken },
    data: { id: 'reports', name: 'Reports', publicUrl: cluster.appUrl('reports'), upstream: cluster.demoUrl, policy: { allow: [{ groups: ['staff'] }] } },
  });
  expect(created.status()).toBe(201);
  expect(servedBy(cluster, created.headers()['x-served-by'])).toBe('b');

  // bob, a member of staff, opens it through node A (which now holds the app and its decision for him).
  await openApp(bob, reports, 'a', 'bob@example.com');
  await bob.reload();
  await expect(bob.getByText('bob@example.com').first()).toBeVisible();

  // alice tightens the policy in the console, on node B: admins only.
  await admin.goto(`${cluster.portalUrl}/admin/apps/reports`);
  await expect(admin.getByRole('heading', { level: 1, name: 'Reports' })).toBeVisible();
  const groups = admin.getByRole('group', { name: 'Allow rule 1' }).getByRole('textbox', { name: 'Groups' });
  await expect(groups).toHaveValue('staff');
  await groups.fill('admins');
  const saved = admin.waitForResponse((answer) => answer.request().method() === 'PUT' && new URL(answer.url()).pathname === '/api/admin/apps/reports');
  await admin.getByRole('button', { name: 'Save' }).click();
  const answer = await saved;
  expect(answer.status()).toBe(200);
  expect(nodeOf(answer)).toBe('b');

  // bob's next request, on node A: denied. alice, an admin, is let in there.
  const denied = await bob.goto(reports);
  expect(nodeOf(denied)).toBe('a');
  expect(denied?.status()).toBe(403);
  await expect(bob.getByRole('heading', { name: 'Access denied' })).toBeVisible();
  await pinTo(admin.context(), 'a');
  await openApp(admin, reports, 'a', 'alice@example.com');

  const removed = await admin.request.delete(`${cluster.portalUrl}/api/admin/apps/reports`, { headers: { origin: cluster.portalUrl, 'x-csrf-token': csrf.csrfToken } });
  expect(removed.status()).toBe(204);
  await signOutAll(admin, bob);
});

// Threat: a revoked session keeps a WebSocket open on another node, talking to the app after revocation.
test('a WebSocket open through node B closes when its session is revoked on node A', async ({ browser }) => {
  const admin = await signedIn(browser, 'a', 'alice@example.com', 'alice');
  const victim = await signedIn(browser, 'a', 'alice@example.com', 'alice');
  await pinTo(victim.context(), 'b');
  await openApp(victim, `${cluster.appUrl('whoami')}/`, 'b', 'alice@example.com');

  // The socket goes through nginx to node B, and on to the app; the app echoes as alice.
  const echoed = await victim.evaluate(
    (url) =>
      new Promise<string>((resolve, reject) => {
        const socket = new WebSocket(url);
        const scope = globalThis as unknown as { socketClosed: Promise<{ code: number; at: number }> };
        scope.socketClosed = new Promise((closed) => (socket.onclose = (event) => closed({ code: event.code, at: Date.now() })));
        socket.onopen = () => socket.send('hello');
        socket.onmessage = (event) => resolve(String(event.data));
        socket.onerror = () => reject(new Error('the WebSocket failed'));
      }),
    `${cluster.appUrl('whoami').replace('http:', 'ws:')}/ws`,
  );
  expect(echoed).toBe('echo from alice@example.com: hello');

  const revokedAt = await revokeOtherSession(admin, 'a');

  // Closed with 1008 (policy violation) at once. Without the change reaching node B, its periodic
  // re-check (once per session.touchInterval, a minute by default) would be the first to notice.
  const closed = await victim.evaluate(
    () =>
      Promise.race([
        (globalThis as unknown as { socketClosed: Promise<{ code: number; at: number }> }).socketClosed,
        new Promise<{ code: number; at: number }>((resolve) => setTimeout(() => resolve({ code: 0, at: Date.now() }), 10_000)),
      ]),
  );
  expect(closed.code, 'the socket was still open 10 s after the revocation').toBe(1008);
  // For the record (the bound the issue sets, 100 ms p99, is measured by the benchmark): browser and
  // test share the clock; negative means it closed before the answer reached the test.
  test.info().annotations.push({ type: 'revocation to close', description: `${closed.at - revokedAt} ms` });
  await signOutAll(admin, victim);
});
