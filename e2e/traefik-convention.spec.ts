import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { signInAtApp } from './support/proxies.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Traefik's forwardAuth, as Traefik v3 calls it (Traefik itself is not a Debian package): a GET to the
 * configured address, /.gatehouse/forward-auth/<app id>, with the original request's headers (the browser's
 * Accept, cookies...) and X-Forwarded-Method, -Proto, -Host, -Uri, -For (plus the entry point's
 * -Port, -Server and X-Real-Ip). The Host header is the address's own, not the app's. The apps are
 * the default ones, on Gatehouse's own port (Gatehouse as their reverse proxy): a browser signs in
 * there, and its app-host cookie is what Traefik would pass on.
 */

let stack: Stack | undefined;
const whoami = () => `http://whoami.localhost:${stack!.ports.portal}`;
const adminDemo = () => `http://admin-demo.localhost:${stack!.ports.portal}`;
/**
 * Traefik reaches Gatehouse at an address of its own (in compose files, http://gatehouse:4180); each
 * app's middleware names the app. The default apps' ids are their host names' first label.
 */
const address = (appUrl: URL) => `http://127.0.0.1:${stack!.ports.portal}/.gatehouse/forward-auth/${appUrl.hostname.split('.')[0]}`;

test.beforeAll(async () => {
  // Traefik runs on this machine's loopback here: it must be a trusted proxy.
  stack = await startStack({ extraConfig: () => 'trustedProxies: ["127.0.0.1/8", "::1"]\n' });
});

test.afterAll(async () => {
  await stack?.stop();
});

/** Exactly what Traefik's forwardAuth (trustForwardHeader: true) sends for a request to `appUrl`. */
function traefikCheck(
  request: APIRequestContext,
  appUrl: string,
  { method = 'GET', accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', cookie }: { method?: string; accept?: string; cookie?: string } = {},
) {
  const url = new URL(appUrl);
  return request.get(address(url), {
    maxRedirects: 0,
    headers: {
      // The original request's own headers, copied.
      Accept: accept,
      'Accept-Language': 'en',
      'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36',
      ...(cookie ? { Cookie: cookie } : {}),
      // The entry point's (forwardedHeaders) and forwardAuth's own.
      'X-Forwarded-For': '203.0.113.7',
      'X-Forwarded-Host': url.host,
      'X-Forwarded-Method': method,
      'X-Forwarded-Port': url.port || '80',
      'X-Forwarded-Proto': url.protocol.slice(0, -1),
      'X-Forwarded-Server': 'traefik-1',
      'X-Forwarded-Uri': `${url.pathname}${url.search}`,
      'X-Real-Ip': '203.0.113.7',
    },
  });
}

/** The claims of a JWT, unverified (the demo app verifies them; here only what they say is read). */
function claims(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

test('a signed-out browser is redirected to sign in on the app host, which leads back to the page', async ({ request, page }) => {
  const original = `${whoami()}/reports/2024?year=2024&q=a%20b`;
  const check = await traefikCheck(request, original);
  expect(check.status()).toBe(302);
  const location = check.headers().location!;
  expect(location).toBe(`${whoami()}/.gatehouse/start?rd=${encodeURIComponent(original)}`);
  expect(check.headers()['cache-control']).toContain('no-store');

  // Traefik hands that answer to the browser, which follows it: sign-in, then the page it asked for.
  await page.goto(location);
  await expect(page).toHaveURL((url) => url.origin === new URL(stack!.portalUrl).origin && url.pathname === '/sign-in');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
  await page.locator('input[name="login"]').fill('bob@example.com');
  await page.locator('input[name="password"]').fill('bob');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(original);
});

test('API requests and other methods get 401, never a redirect', async ({ request }) => {
  const api = await traefikCheck(request, `${whoami()}/api/things`, { accept: 'application/json' });
  expect(api.status()).toBe(401);
  expect(api.headers().location).toBeUndefined();

  // A form post would lose its body on a redirect.
  const post = await traefikCheck(request, `${whoami()}/form`, { method: 'POST' });
  expect(post.status()).toBe(401);
  expect(post.headers().location).toBeUndefined();
});

test('signed in: 200 with the identity headers Traefik copies (authResponseHeaders)', async ({ page, context, request }) => {
  await signInAtApp(page, `${whoami()}/`, stack!.portalUrl, 'alice@example.com', 'alice');
  const cookie = (await context.cookies(whoami())).map(({ name, value }) => `${name}=${value}`).join('; ');
  expect(cookie).toContain('gatehouse_app=');

  const check = await traefikCheck(request, `${whoami()}/reports?year=2024`, { cookie });
  expect(check.status()).toBe(200);
  const headers = check.headers();
  expect(headers['x-gatehouse-email']).toBe('alice@example.com');
  expect(headers['x-gatehouse-name']).toBe('Alice Example');
  expect(headers['x-gatehouse-groups']?.split(',')).toEqual(expect.arrayContaining(['staff', 'admins']));
  expect(headers['x-gatehouse-user']).toMatch(/\S/);
  const assertion = claims(headers['x-gatehouse-assertion']!);
  expect(assertion).toMatchObject({ aud: whoami(), sub: headers['x-gatehouse-user'], email: 'alice@example.com' });
  expect(headers['cache-control']).toContain('no-store');

  // Alice may open admin-demo too, but this cookie belongs to whoami: at admin-demo it counts for nothing.
  const elsewhere = await traefikCheck(request, `${adminDemo()}/`, { cookie, accept: 'application/json' });
  expect(elsewhere.status()).toBe(401);

  // A host Gatehouse does not know is refused, with every identity header present and empty.
  const unknown = await traefikCheck(request, `http://intranet.localhost:${stack!.ports.portal}/`, { cookie });
  expect(unknown.status()).toBe(403);
  for (const name of ['x-gatehouse-user', 'x-gatehouse-email', 'x-gatehouse-name', 'x-gatehouse-groups', 'x-gatehouse-assertion']) {
    expect(unknown.headers()[name]).toBe('');
  }
});

test('bob (staff) is refused the admins-only app with 403 and Gatehouse\'s page, which Traefik passes on', async ({ page, context, request }) => {
  await signInAtApp(page, `${whoami()}/`, stack!.portalUrl, 'bob@example.com', 'bob');
  // Gatehouse (as admin-demo's reverse proxy here) runs the handshake for admin-demo and refuses him.
  const denied = await page.goto(`${adminDemo()}/`);
  expect(denied?.status()).toBe(403);
  const cookie = (await context.cookies(adminDemo())).map(({ name, value }) => `${name}=${value}`).join('; ');
  const check = await traefikCheck(request, `${adminDemo()}/`, { cookie });
  expect(check.status()).toBe(403);
  expect(check.headers()['x-gatehouse-email']).toBe('');
  // forwardAuth hands a non-2xx answer to the browser as it is, body and headers: the page says who
  // is signed in and which app said no, and offers Switch account and Sign out on the app's host.
  expect(check.headers()['content-type']).toContain('text/html');
  const body = await check.text();
  expect(body).toContain('who may not open <strong>Admin demo</strong>');
  expect(body).toContain('bob@example.com');
  expect(body).toMatch(/action="\/\.gatehouse\/switch-account"/);
  expect(body).toMatch(/action="\/\.gatehouse\/sign-out"/);
  // An API client is told 403, without a page.
  const api = await traefikCheck(request, `${adminDemo()}/`, { cookie, accept: 'application/json' });
  expect(api.status()).toBe(403);
  expect(await api.text()).toBe('');
});

test('docs/deploy/traefik.yml asks for exactly these headers and strips every client copy', () => {
  const text = readFileSync(new URL('../docs/deploy/traefik.yml', import.meta.url), 'utf8');
  expect(text).toContain('address: http://GATEHOUSE_UPSTREAM/.gatehouse/forward-auth/APP_ID');
  expect(text).toMatch(/trustForwardHeader: true/);
  const names = ['User', 'Email', 'Name', 'Groups', 'Assertion'];
  const authResponseHeaders = text.slice(text.indexOf('authResponseHeaders:')).split('\n').slice(1, 6).map((line) => line.trim());
  expect(authResponseHeaders).toEqual(names.map((name) => `- X-Gatehouse-${name}`));
  // Go keeps "_" in header names; Traefik deletes by name without regard to case, so each of the four
  // separator combinations must be listed, for each header.
  for (const name of names) {
    for (const first of ['-', '_']) {
      for (const second of ['-', '_']) expect(text).toContain(`X${first}Gatehouse${second}${name}: ""`);
    }
  }
  expect(text).toContain('X-Forwarded-Uri: ""');
  expect(text).toContain('X-Forwarded-Method: ""');
});
