import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { freePort } from './support/proxies.js';
import { freePortBlock, runDevelopmentGatehouse } from './support/stack.js';

/**
 * An app that asks Gatehouse's OpenID Provider for `response_mode=form_post` (as Apache's
 * mod_auth_openidc can, and others do by default): the authorization response reaches the app's
 * redirect URI as a POST, sent by a page of Gatehouse's that submits itself with one inline script.
 * Gatehouse's Content-Security-Policy lets that script run by its hash and nothing else
 * (provide/pages.ts): Chromium submits the form without a single CSP violation, and without
 * JavaScript the page's Continue button does it. Chromium → Gatehouse → the development IdP and back →
 * the app.
 */

let port = 0;
let appPort = 0;
let gatehouse: { stop(): Promise<void> } | undefined;
let app: Server | undefined;
const secret = randomBytes(32).toString('base64url');
const portal = () => `http://localhost:${port}`;
const redirectUri = () => `http://127.0.0.1:${appPort}/callback`;

/** What reached the app's redirect URI. */
const received: Array<{ method: string; contentType: string | undefined; params: URLSearchParams }> = [];

test.beforeAll(async () => {
  // The default start's layout: the portal, the development IdPs (+1, +3), the demo app (+2), metrics (+9).
  port = await freePortBlock([1, 2, 3, 9]);
  appPort = await freePort();
  // The app: its redirect URI keeps what it is sent and says so.
  app = createServer((request, response) => {
    if (request.url !== '/callback') return void response.writeHead(404).end();
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ method: request.method ?? '', contentType: request.headers['content-type'], params: new URLSearchParams(body) });
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Board</title><h1>Signed in at the app</h1>');
    });
  });
  await new Promise<void>((resolve) => app!.listen(appPort, '127.0.0.1', resolve));

  gatehouse = await runDevelopmentGatehouse('oidc-form-post', port, [
    '  - id: board',
    '    name: Board',
    `    publicUrl: http://127.0.0.1:${appPort}`,
    '    guard: false',
    '    policy:',
    '      allow: [{ groups: [staff] }]',
    '    oidc:',
    `      secrets: [${JSON.stringify(secret)}]`,
    `      redirectUris: [${JSON.stringify(redirectUri())}]`,
    '      scopes: [openid, email]',
  ]);
});

test.afterAll(async () => {
  try {
    await new Promise((resolve) => app?.close(resolve));
  } finally {
    await gatehouse?.stop();
  }
});

/** The app's authorization request, with a state of its own. */
function authorization(): { url: string; state: string } {
  const state = randomBytes(16).toString('base64url');
  const params = new URLSearchParams({ client_id: 'board', response_type: 'code', response_mode: 'form_post', redirect_uri: redirectUri(), scope: 'openid email', state });
  return { url: `${portal()}/oidc/authorize?${params}`, state };
}

/** Every message Chromium writes about the Content-Security-Policy (a violation is an error there). */
function cspMessages(page: Page): string[] {
  const messages: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) messages.push(`${message.type()}: ${message.text()}`);
  });
  return messages;
}

/** The app redeems what it was posted, as a confidential client: the code is a real one. */
async function redeem(context: BrowserContext, code: string): Promise<Record<string, unknown>> {
  const answer = await context.request.post(`${portal()}/oidc/token`, {
    headers: { authorization: `Basic ${Buffer.from(`board:${secret}`).toString('base64')}` },
    form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri() },
  });
  expect(answer.status()).toBe(200);
  return (await answer.json()) as Record<string, unknown>;
}

test('the authorization response reaches the app as a POST carrying the code and the state, with no CSP violation', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const messages = cspMessages(page);
  const { url, state } = authorization();
  const formPage = page.waitForResponse((response) => response.url().startsWith(`${portal()}/oidc/authorize/`) && response.status() === 200);
  await page.goto(url);
  await expect(page).toHaveURL((at) => at.origin === portal() && at.pathname === '/sign-in');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill('alice@example.com');
  await page.locator('input[name="password"]').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();

  // Gatehouse's page submitted itself: the browser is at the app, which was posted the answer.
  await expect(page).toHaveURL(redirectUri());
  await expect(page.getByRole('heading', { name: 'Signed in at the app' })).toBeVisible();
  // The page that posted it ran its script under a policy naming that script alone.
  expect((await formPage).headers()['content-security-policy']).toMatch(/(^|;)\s*script-src 'sha256-[\w+/]+=*'\s*(;|$)/);
  expect(received).toHaveLength(1);
  const [posted] = received;
  expect(posted).toMatchObject({ method: 'POST', contentType: 'application/x-www-form-urlencoded' });
  expect(posted!.params.get('state')).toBe(state);
  expect(posted!.params.get('iss')).toBe(portal());
  expect(posted!.params.get('code')).toMatch(/^[\w-]{20,}$/);
  expect(messages).toEqual([]);
  expect((await redeem(context, posted!.params.get('code')!)).id_token).toEqual(expect.any(String));

  // Without JavaScript, the same page shows a button that posts the same answer.
  const signedIn = await context.storageState();
  const noScript = await browser.newContext({ javaScriptEnabled: false, storageState: signedIn });
  const plain = await noScript.newPage();
  const again = authorization();
  // Signed in already: the authorization request itself is answered with the page.
  await plain.goto(again.url);
  await expect(plain).toHaveURL(again.url);
  await plain.getByRole('button', { name: 'Continue' }).click();
  await expect(plain).toHaveURL(redirectUri());
  expect(received).toHaveLength(2);
  expect(received[1]).toMatchObject({ method: 'POST' });
  expect(received[1]!.params.get('state')).toBe(again.state);
  expect((await redeem(noScript, received[1]!.params.get('code')!)).id_token).toEqual(expect.any(String));
  await noScript.close();
  await context.close();
});
