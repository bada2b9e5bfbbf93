import { request as httpRequest } from 'node:http';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { freePort, signInAtApp, startCaddy, startNginx, type ProxyOptions, type RunningProxy } from './support/proxies.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Gatehouse behind the proxies people already run, in forward-auth mode: Debian's nginx (auth_request)
 * and Caddy (forward_auth), each configured from the file in docs/deploy/ that people copy, in front of
 * a Gatehouse stack of its own (the portal, the development IdPs, the demo app). The browser only ever
 * talks to the proxy for the apps: http://whoami.localhost:<proxy port> (staff) and
 * http://admin-demo.localhost:<proxy port> (admins). Requests that need a raw Host header or raw path
 * go to 127.0.0.1 with the Host header set, as Node cannot resolve *.localhost.
 */

interface WhoamiJson {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  identity: { user: string | null; email: string | null; name: string | null; groups: string[] | null };
  assertion: { status: string };
}

/** Every spelling of an identity header, as Node lower-cases them: "_" for "-" included. */
const isIdentitySpelling = (name: string) => name.replace(/_/g, '-').startsWith('x-gatehouse-');
const IDENTITY_HEADERS = ['x-gatehouse-user', 'x-gatehouse-email', 'x-gatehouse-name', 'x-gatehouse-groups', 'x-gatehouse-assertion'];

/** What a client may try to hand the app or Gatehouse itself. */
const SPOOFED = {
  'X-Gatehouse-Email': 'evil@example.com',
  'X-Gatehouse_Email': 'evil@example.com',
  'x-gatehouse-user': 'evil',
  'X_Gatehouse_Groups': 'evil-admins',
  'X-GATEHOUSE-NAME': 'evil',
} as const;

const proxies: ReadonlyArray<{ name: string; start: (options: ProxyOptions) => Promise<RunningProxy> }> = [
  { name: 'nginx auth_request (docs/deploy/nginx.conf)', start: startNginx },
  { name: 'Caddy forward_auth (docs/deploy/Caddyfile)', start: startCaddy },
];

for (const { name, start } of proxies) {
  test.describe(name, () => {
    let port = 0;
    let stack: Stack | undefined;
    let proxy: RunningProxy | undefined;
    const whoami = () => `http://whoami.localhost:${port}`;
    const adminDemo = () => `http://admin-demo.localhost:${port}`;
    const portal = () => stack!.portalUrl;

    test.beforeAll(async () => {
      // The proxy's port goes into Gatehouse's config (the apps' public URLs), so it is chosen first.
      port = await freePort();
      stack = await startStack({
        apps: ({ demo }) => `apps:
  - { id: whoami, name: Whoami, publicUrl: "http://whoami.localhost:${port}", upstream: "http://localhost:${demo}", publicPaths: ["/public/*"], policy: { allow: [{ groups: [staff] }] } }
  - { id: admin-demo, name: Admin demo, publicUrl: "http://admin-demo.localhost:${port}", upstream: "http://localhost:${demo}", policy: { allow: [{ groups: [admins] }] } }
`,
        extraConfig: () => 'trustedProxies: ["127.0.0.1/8", "::1"]\n',
      });
      proxy = await start({ port, gatehousePort: stack.ports.portal, demoPort: stack.ports.demo });
    });

    test.afterAll(async () => {
      try {
        await proxy?.stop();
      } finally {
        await stack?.stop();
      }
    });

    // eslint-disable-next-line no-empty-pattern -- Playwright hooks take their fixtures first; none needed
    test.afterEach(async ({}, testInfo) => {
      if (proxy && testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach('proxy log', { body: proxy.logs(), contentType: 'text/plain' });
        await testInfo.attach('proxy config', { body: proxy.config, contentType: 'text/plain' });
      }
    });

    /** A request to the proxy as a non-browser client sends it: raw Host header, no redirects followed. */
    const viaProxy = (request: APIRequestContext, host: string, path: string, headers: Record<string, string> = {}) =>
      request.get(`${proxy!.url}${path}`, { headers: { Host: `${host}:${port}`, ...headers }, maxRedirects: 0 });

    test('a signed-out browser goes through the IdP and lands on the page it asked for, with its identity', async ({ page, context }) => {
      const target = `${whoami()}/reports/2024?year=2024&q=a%20b`;
      await page.goto(target);
      // The proxy sent it to Gatehouse's sign-in page on the portal...
      await expect(page).toHaveURL((url) => url.origin === new URL(portal()).origin && url.pathname === '/sign-in');
      await page.getByRole('link', { name: 'Sign in with Development IdP' }).or(page.getByRole('button', { name: 'Sign in with Development IdP' })).click();
      // ...and from there to the Development IdP's login form.
      await expect(page.locator('input[name="login"]')).toBeVisible();
      expect(new URL(page.url()).origin).toBe(stack!.idpUrl);
      await page.locator('input[name="login"]').fill('alice@example.com');
      await page.locator('input[name="password"]').fill('alice');
      await page.getByRole('button', { name: 'Sign in' }).click();

      // Back on the app's host, at the very URL (query included), served by the app behind the proxy.
      await page.waitForURL(target);
      await expect(page.getByRole('heading', { name: 'whoami', level: 1 })).toBeVisible();
      await expect(page.getByRole('row', { name: /^URL / })).toContainText('/reports/2024?year=2024&q=a%20b');
      await expect(page.getByRole('row', { name: /^X-Gatehouse-Email / })).toContainText('alice@example.com');
      await expect(page.getByRole('row', { name: /^X-Gatehouse-Name / })).toContainText('Alice Example');
      await expect(page.getByRole('row', { name: /^X-Gatehouse-Groups / })).toContainText('admins');
      // The app checked the signed assertion against Gatehouse's keys, for its own origin.
      await expect(page.getByText('Assertion verified')).toBeVisible();

      // The app host has a cookie of its own; the app never sees it.
      const cookies = await context.cookies(whoami());
      expect(cookies.find((cookie) => cookie.name === 'gatehouse_app')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      const json = await page.goto(`${whoami()}/?format=json`);
      const seen = (await json!.json()) as WhoamiJson;
      expect(seen.assertion.status).toBe('verified');
      expect(String(seen.headers.cookie ?? '')).not.toContain('gatehouse_');
    });

    test('bob (staff) reaches whoami but gets 403 from the admins-only app', async ({ page }) => {
      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      await expect(page.getByRole('row', { name: /^X-Gatehouse-Email / })).toContainText('bob@example.com');

      // admin-demo has no cookie yet: its handshake runs (no second trip to the IdP), then the check says
      // no. (Chromium turns a 403 without a body into a navigation error: the status is what counts.)
      const target = `${adminDemo()}/`;
      const [denied] = await Promise.all([
        page.waitForResponse((response) => response.url() === target && response.status() !== 302 && response.status() !== 303),
        page.goto(target).catch(() => null),
      ]);
      expect(denied.status()).toBe(403);
      await expect(page.getByRole('heading', { name: 'whoami' })).toHaveCount(0);
      expect(await denied.text()).not.toContain('whoami');

      // whoami still answers him.
      const allowed = await page.goto(`${whoami()}/?format=json`);
      expect(allowed?.status()).toBe(200);
      const body = (await allowed!.json()) as WhoamiJson;
      expect(body.identity).toMatchObject({ email: 'bob@example.com', groups: ['staff'] });
    });

    test('WebSockets pass the same check and carry the identity', async ({ page }) => {
      // Signed out, the upgrade is refused before it reaches the app.
      await page.goto(`${whoami()}/public/hello?format=json`);
      expect(await echo(page, `ws://whoami.localhost:${port}/ws`)).toMatch(/^closed/);

      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      // A page without the whoami page's Content-Security-Policy, to open the socket from.
      await page.goto(`${whoami()}/?format=json`);
      expect(await echo(page, `ws://whoami.localhost:${port}/ws`)).toBe('echo from bob@example.com: hello');
    });

    test('identity headers a client sends never reach the app, in any case or spelling', async ({ page, context }) => {
      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      await context.addCookies([{ name: 'theme', value: 'dark', url: whoami() }]);
      await page.setExtraHTTPHeaders({ ...SPOOFED });

      const response = await page.goto(`${whoami()}/spoof?format=json`);
      expect(response?.status()).toBe(200);
      const body = (await response!.json()) as WhoamiJson;
      expect(body.identity).toMatchObject({ email: 'bob@example.com', name: 'Bob Example', groups: ['staff'] });
      expect(body.identity.user).toMatch(/\S/);
      expect(JSON.stringify(body.headers)).not.toContain('evil');
      // Exactly Gatehouse's five headers, one copy each, no other spelling.
      expect(Object.keys(body.headers).filter(isIdentitySpelling).sort()).toEqual([...IDENTITY_HEADERS].sort());
      for (const header of IDENTITY_HEADERS) expect(typeof body.headers[header]).toBe('string');
      // The app's own cookie arrives; Gatehouse's do not.
      expect(body.headers.cookie).toBe('theme=dark');
    });

    test('a public path needs no sign-in and carries no identity, not even a forged one', async ({ page }) => {
      await page.setExtraHTTPHeaders({ ...SPOOFED });
      const response = await page.goto(`${whoami()}/public/hello?format=json`);
      expect(response?.status()).toBe(200);
      expect(new URL(page.url()).origin).toBe(whoami());
      const body = (await response!.json()) as WhoamiJson;
      expect(body.url).toBe('/public/hello?format=json');
      expect(JSON.stringify(body.headers)).not.toContain('evil');
      // nginx sends no identity header at all, Caddy sends them empty: either way, nobody.
      for (const value of Object.values(body.identity)) expect(value ?? []).toHaveLength(0);
    });

    test('signed out: browsers are redirected to sign in on the app host, API clients get 401', async ({ request }) => {
      const browserLike = await viaProxy(request, 'whoami.localhost', '/docs/a?x=1&y=two%20words', { Accept: 'text/html,application/xhtml+xml' });
      expect(browserLike.status()).toBe(302);
      expect(browserLike.headers().location).toBe(
        `${whoami()}/.gatehouse/start?rd=${encodeURIComponent(`${whoami()}/docs/a?x=1&y=two%20words`)}`,
      );

      const api = await viaProxy(request, 'whoami.localhost', '/api/things', { Accept: 'application/json' });
      expect(api.status()).toBe(401);
      expect(api.headers().location).toBeUndefined();

      const post = await request.post(`${proxy!.url}/form`, {
        headers: { Host: `whoami.localhost:${port}`, Accept: 'text/html' },
        form: { a: '1' },
        maxRedirects: 0,
      });
      expect(post.status()).toBe(401);
    });

    test('a client cannot pass itself off as another app, another path or another scheme', async ({ page, context, request }) => {
      // Bob's cookie for whoami, replayed at admin-demo with forwarded headers that name whoami and a
      // public path: the proxy describes the request itself, and the cookie only works for whoami.
      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      const cookie = (await context.cookies(whoami())).map(({ name, value }) => `${name}=${value}`).join('; ');
      const forged = {
        Cookie: cookie,
        Accept: 'application/json',
        'X-Forwarded-Host': `whoami.localhost:${port}`,
        'X-Forwarded-Uri': '/public/x',
        'X-Forwarded-Proto': 'https',
        'X-Forwarded-Method': 'OPTIONS',
        Forwarded: `for=203.0.113.9;host=whoami.localhost:${port};proto=http`,
      };
      const replay = await viaProxy(request, 'admin-demo.localhost', '/?format=json', forged);
      expect(replay.status()).toBe(401);

      // A private path on whoami with a forged public X-Forwarded-Uri is still private...
      const { Cookie: _cookie, ...noCookie } = forged;
      expect((await viaProxy(request, 'whoami.localhost', '/private?format=json', noCookie)).status()).toBe(401);
      // ...and the same cookie on its own host works, whatever the forged headers say.
      const honest = await viaProxy(request, 'whoami.localhost', '/?format=json', forged);
      expect(honest.status()).toBe(200);
      expect(((await honest.json()) as WhoamiJson).identity.email).toBe('bob@example.com');
    });

    test('private paths stay private however they are spelled', async () => {
      for (const path of ['/public/../secret', '/public/%2e%2e/secret', '/public/..%2fsecret', '/public%2f..%2fsecret', '/public/..;/secret', '/public/%252e%252e/secret', '/PUBLIC/x']) {
        const status = await rawGet(port, `whoami.localhost:${port}`, path);
        expect(status, path).not.toBe(200);
      }
      expect(await rawGet(port, `whoami.localhost:${port}`, '/public/./x')).toBe(200);
    });
  });
}

/** Opens a WebSocket from the page, sends "hello", and tells the first answer (or how it ended). */
function echo(page: Page, url: string): Promise<string> {
  return page.evaluate(
    (socketUrl) =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(socketUrl);
        const timer = setTimeout(() => resolve('timeout'), 5_000);
        socket.onopen = () => socket.send('hello');
        socket.onmessage = (event) => {
          clearTimeout(timer);
          resolve(String(event.data));
          socket.close();
        };
        socket.onclose = (event) => {
          clearTimeout(timer);
          resolve(`closed ${event.code}`);
        };
      }),
    url,
  );
}

/** A GET with the path exactly as written (no URL normalisation), as an attacker would send it. */
function rawGet(port: number, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers: { host, accept: 'application/json' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

