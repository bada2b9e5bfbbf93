import { request as httpRequest } from 'node:http';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { FILES, startFileApp, type FileApp } from './support/fileApp.js';
import { freePort, signInAtApp, startCaddy, startNginx, type ProxyOptions, type RunningProxy } from './support/proxies.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * Gatehouse behind the proxies people already run, in forward-auth mode: Debian's nginx (auth_request)
 * and Caddy (forward_auth), each configured from the file in docs/deploy/ that people copy, in front of
 * a Gatehouse stack of its own (the portal, the development IdPs, the demo app). The browser only ever
 * talks to the proxy for the apps: http://whoami.localhost:<proxy port> (staff) and
 * http://admin-demo.localhost:<proxy port> (admins). Each app is a block of its own that names it.
 * A third app, vault (admins only, public /static/*), is served on the same host name as whoami but
 * on a second port, by an upstream that resolves paths as real apps do (support/fileApp.ts): it is
 * what the forward-auth bypasses were shown against. Requests that need a raw Host header or raw path
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
    let vaultPort = 0;
    let stack: Stack | undefined;
    let proxy: RunningProxy | undefined;
    let files: FileApp | undefined;
    const whoami = () => `http://whoami.localhost:${port}`;
    const adminDemo = () => `http://admin-demo.localhost:${port}`;
    const portal = () => stack!.portalUrl;

    test.beforeAll(async () => {
      // The proxy's ports go into Gatehouse's config (the apps' public URLs), so they are chosen first.
      port = await freePort();
      vaultPort = await freePort();
      files = await startFileApp();
      stack = await startStack({
        apps: ({ demo }) => `apps:
  - { id: whoami, name: Whoami, publicUrl: "http://whoami.localhost:${port}", upstream: "http://localhost:${demo}", publicPaths: ["/public/*"], policy: { allow: [{ groups: [staff] }] } }
  - { id: admin-demo, name: Admin demo, publicUrl: "http://admin-demo.localhost:${port}", upstream: "http://localhost:${demo}", policy: { allow: [{ groups: [admins] }] } }
  - { id: vault, name: Vault, publicUrl: "http://whoami.localhost:${vaultPort}", upstream: "http://${files!.address}", publicPaths: ["/static/*"], policy: { allow: [{ groups: [admins] }] } }
`,
        extraConfig: () => 'trustedProxies: ["127.0.0.1/8", "::1"]\n',
      });
      const demo = `127.0.0.1:${stack.ports.demo}`;
      proxy = await start({
        port,
        gatehousePort: stack.ports.portal,
        apps: [
          { id: 'whoami', host: 'whoami.localhost', port, upstream: demo },
          { id: 'admin-demo', host: 'admin-demo.localhost', port, upstream: demo },
          { id: 'vault', host: 'whoami.localhost', port: vaultPort, upstream: files.address },
        ],
      });
    });

    test.afterAll(async () => {
      try {
        await proxy?.stop();
      } finally {
        await stack?.stop();
        await files?.stop();
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
      // no, and he sees Gatehouse's own page through the proxy (nginx asks for it on the 403).
      const target = `${adminDemo()}/`;
      const [denied] = await Promise.all([
        page.waitForResponse((response) => response.url() === target && response.status() !== 302 && response.status() !== 303),
        page.goto(target),
      ]);
      expect(denied.status()).toBe(403);
      await expect(page.getByRole('heading', { name: 'whoami' })).toHaveCount(0);
      expect(await denied.text()).not.toContain('whoami');
      await expect(page.getByRole('heading', { name: 'Access denied' })).toBeVisible();
      await expect(page.getByRole('main')).toContainText('You are signed in as bob@example.com, who may not open Admin demo.');
      await expect(page.getByRole('button', { name: 'Switch account' })).toBeVisible();
      await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
      // An API client is told 403 alone.
      const cookie = (await page.context().cookies(adminDemo())).map(({ name, value }) => `${name}=${value}`).join('; ');
      const api = await rawRequest(port, `admin-demo.localhost:${port}`, '/api', { Cookie: cookie });
      expect(api.status).toBe(403);
      expect(api.body).not.toContain('Access denied');

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

    /** A GET to vault's block (the second port), with the path exactly as written. */
    const toVault = (hostHeader: string, path: string, headers: Record<string, string> = {}) => rawRequest(vaultPort, hostHeader, path, headers);
    const vaultHost = () => `whoami.localhost:${vaultPort}`;
    const secrets = Object.values(FILES).filter((content) => /SECRET|PRIVATE/.test(content));
    const leaks = (body: string) => secrets.some((secret) => body.includes(secret));

    test('a Host that names no app reaches no app', async () => {
      const answer = await rawRequest(port, `intranet.localhost:${port}`, '/?format=json');
      expect(answer.body).not.toContain('whoami');
      // nginx: the shipped default server answers 421 (Misdirected Request). Caddy answers such a
      // request with no site itself (an empty 200 from no route).
      if (name.startsWith('nginx')) expect(answer.status).toBe(421);
      else expect(answer.body).toBe('');
    });

    test('vault: its public path answers, its private files need an admin', async () => {
      const css = await toVault(vaultHost(), '/static/app.css');
      expect(css.status).toBe(200);
      expect(css.body).toBe(FILES['/static/app.css']);
      const secret = await toVault(vaultHost(), '/secret.txt');
      expect(secret.status).toBe(401);
      expect(leaks(secret.body)).toBe(false);
    });

    // Threat (issue 16, 1): public-path bypass through forward-auth. Gatehouse judged the part of
    // X-Forwarded-Uri before the first comma ("/static", public); the proxy sends the whole target to
    // the app, which resolves "/static,/../secret.txt" to "/secret.txt" and hands it out.
    test('a comma or a dot segment never turns a public path into a private file', async () => {
      for (const path of [
        '/static,/../secret.txt',
        '/static/..,/secret.txt',
        '/static,/x/../../secret.txt',
        '/static/%2e%2e/secret.txt',
        '/static/..%2fsecret.txt',
        '/static/..;/secret.txt',
        '/static;/../secret.txt',
        '/static/%252e%252e/secret.txt',
        '/static/%EF%BC%8E%EF%BC%8E/secret.txt',
        '/static/./../public/report.txt',
      ]) {
        const answer = await toVault(vaultHost(), path);
        expect(leaks(answer.body), `${path}: ${answer.status}`).toBe(false);
        expect(answer.status, path).not.toBe(200);
      }
    });

    // Threat (issue 16, 2): the client's Host chose which app's policy forward-auth applied. bob (staff)
    // sends vault's block whoami's Host: the check was whoami's (allowed, or public for /public/*),
    // and the proxy then served vault's files.
    test("a Host naming another app never lends that app's policy", async ({ page, context }) => {
      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      const cookie = (await context.cookies(whoami())).map(({ name, value }) => `${name}=${value}`).join('; ');
      expect(cookie).toContain('gatehouse_app=');
      for (const [hostHeader, path, headers] of [
        [`whoami.localhost:${port}`, '/secret.txt', { Cookie: cookie }],
        [`whoami.localhost:${port}`, '/public/report.txt', {}],
        [`WHOAMI.localhost:${port}`, '/public/report.txt', {}],
        [`whoami.localhost:${port}`, '/public/report.txt', { Cookie: cookie }],
        [`admin-demo.localhost:${port}`, '/secret.txt', {}],
      ] as const) {
        const answer = await toVault(hostHeader, path, headers);
        expect(leaks(answer.body), `${hostHeader}${path}: ${answer.status}`).toBe(false);
        // Refused (or, for a Host no site of Caddy's has, Caddy's empty answer from no route).
        expect(answer.status === 200 && answer.body !== '', `${hostHeader}${path}: ${answer.status}`).toBe(false);
      }
      // His whoami cookie still works on whoami itself.
      expect((await rawRequest(port, `whoami.localhost:${port}`, '/?format=json', { Cookie: cookie })).status).toBe(200);
    });

    // Threat (issue 16, 7 for forward-auth): the proxy passes the client's X-Original-URL on to the
    // app, and an app that routes by it (IIS, Symfony, Laravel) serves that URL instead of the judged one.
    test('a request carrying a URL-rewrite header is refused', async () => {
      for (const [name, value] of [
        ['X-Original-URL', '/secret.txt'],
        ['X-Rewrite-URL', '/secret.txt'],
        ['X-Original-URI', '/secret.txt'],
      ] as const) {
        const answer = await toVault(vaultHost(), '/static/app.css', { [name]: value });
        expect(answer.status, name).toBe(403);
      }
    });

    // Threat (issue 16, 8): a client's "Connection: X-Gatehouse-Email" made Caddy delete the identity
    // header the check had just set (as hop-by-hop), so the app got the request without it.
    test('a Connection header never takes the identity away from a request that reaches the app', async ({ page, context }) => {
      await signInAtApp(page, `${whoami()}/`, portal(), 'bob@example.com', 'bob');
      const cookie = (await context.cookies(whoami())).map(({ name, value }) => `${name}=${value}`).join('; ');
      for (const connection of ['X-Gatehouse-Email', 'x-gatehouse-assertion, X-Gatehouse-User', 'keep-alive, X_Gatehouse_Groups']) {
        const answer = await rawRequest(port, `whoami.localhost:${port}`, '/?format=json', { Cookie: cookie, Connection: connection });
        if (answer.status === 200) {
          const seen = JSON.parse(answer.body) as WhoamiJson;
          expect(seen.identity.email, connection).toBe('bob@example.com');
          expect(seen.assertion.status, connection).toBe('verified');
        } else {
          expect(answer.status, connection).toBe(400);
        }
      }
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

/** A GET with the path and headers exactly as written (no URL normalisation), as an attacker would send it. */
function rawRequest(port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers: { host, accept: 'application/json', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end();
  });
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

