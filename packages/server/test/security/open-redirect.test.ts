import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { checkReturnTo, portalReturnToPolicy, validateReturnTo, type ReturnToPolicy } from '../../src/apps/returnTo.js';
import { parseConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';

/**
 * Threat class: open redirect (CWE-601). After signing in, Gatehouse sends the browser to a return-to
 * (`rd`) the request chose. An attacker who can make it another origin sends a freshly signed-in person
 * to a look-alike site ("sign in again") or hands an app-bound code to it. The only destinations are the
 * portal and the configured app origins; anything else, or anything a browser could read otherwise,
 * falls back to the default. Every case here asserts what a BROWSER does with the answer: resolve it
 * against the page's own origin (a Location header, an <a href>) and land on an allowed origin.
 */
const PORTAL = 'http://localhost:4180';
const APP = 'http://whoami.localhost:4180';
const APP_HTTPS = 'https://wiki.example.com';
const policy: ReturnToPolicy = {
  portalOrigin: PORTAL,
  appOrigins: new Set([APP, APP_HTTPS]),
  notDestinations: new Set(['/sign-in', '/signed-out']),
};
const allowedOrigins = new Set([PORTAL, APP, APP_HTTPS]);

/** The origin a browser ends up on when it follows `value` from a page on `base`. */
function browserOrigin(value: string, base = PORTAL): string {
  return new URL(value, base).origin;
}

/**
 * Hostile return-tos: advisory-derived (oauth2-proxy GHSA-5vqc-…, GHSA-652x-…, Pomerium, Keycloak
 * redirect_uri bypasses) and the review of this project (issue: `/.//evil.com/phish`).
 */
const HOSTILE: Array<[string, string]> = [
  // Dot segments that the URL parser resolves into a scheme-relative "//host" (the reported bug).
  ['dot segment then //', '/.//evil.com/phish'],
  ['dot-dot segment then //', '/..//evil.com'],
  ['percent-encoded dot-dot then //', '/%2e%2e//evil.com'],
  ['percent-encoded dot then //', '/%2e//evil.com'],
  ['upper-case percent-encoded dot-dot', '/%2E%2E//evil.com'],
  ['mixed dot segments', '/a/b/../../..//evil.com/x'],
  ['portal origin + //', `${PORTAL}//evil.com`],
  ['portal origin + dot + //', `${PORTAL}/.//evil.com/phish`],
  ['portal origin + three slashes', `${PORTAL}///evil.com`],
  ['app origin + //', `${APP}//evil.com`],
  // Scheme-relative and backslash forms browsers read as another host.
  ['scheme-relative', '//evil.com'],
  ['scheme-relative, three slashes', '///evil.com'],
  ['backslash', '/\\evil.com'],
  ['two backslashes', '\\\\evil.com'],
  ['slash backslash slash', '/\\/evil.com'],
  ['backslash in an absolute URL', `${PORTAL}\\@evil.com`],
  // Whitespace and control characters browsers strip.
  ['tab', '/\t/evil.com'],
  ['newline', '/\n/evil.com'],
  ['carriage return', '/\r/evil.com'],
  ['leading space', ' //evil.com'],
  ['NUL', '/\u0000/evil.com'],
  ['C1 control', '/\u0085/evil.com'],
  ['tab inside a scheme', 'ht\ttps://evil.com'],
  // Userinfo tricks.
  ['userinfo reads like the portal', `http://localhost:4180@evil.com/`],
  ['userinfo reads like an app', `${APP}@evil.com/`],
  ['credentials on an app', `http://user:pass@whoami.localhost:4180/`],
  ['empty userinfo', 'http://@evil.com/'],
  ['fragment then @', 'https://evil.com#@localhost:4180'],
  ['query then @', 'https://evil.com?@localhost:4180'],
  // Look-alike hosts.
  ['subdomain suffix of the portal', 'https://localhost:4180.evil.com/'],
  ['suffix of the portal host', 'http://localhost.evil.com:4180/'],
  ['subdomain suffix of an app', `${APP}.evil.com/`],
  ['app origin as a path', 'https://evil.com/whoami.localhost:4180'],
  ['app on another port', 'http://whoami.localhost:4181/'],
  ['app over https instead of http', 'https://whoami.localhost:4180/'],
  ['https app over http', 'http://wiki.example.com/'],
  ['https app on another port', 'https://wiki.example.com:8443/'],
  ['portal over https instead of http', 'https://localhost:4180/account'],
  ['IDN look-alike of an app', 'https://wіki.example.com/'], // Cyrillic і
  ['trailing dot on an app host', 'https://wiki.example.com./'],
  // Other schemes.
  ['javascript:', 'javascript:alert(1)'],
  ['JavaScript: with capitals', 'JavaScript:alert(document.domain)'],
  ['javascript: with slashes', 'javascript://%0aalert(1)'],
  ['data:', 'data:text/html,<script>alert(1)</script>'],
  ['vbscript:', 'vbscript:msgbox(1)'],
  ['file:', 'file:///etc/passwd'],
  ['ftp:', 'ftp://evil.com/'],
  ['http: without slashes', 'http:evil.com'],
  ['https: with one slash', 'https:/evil.com'],
  ['other origin', 'https://evil.com/'],
  // Gatehouse's own endpoints, and pages that are no destination.
  ['sign-out', '/.gatehouse/sign-out'],
  ['callback on the portal origin', `${PORTAL}/.gatehouse/callback/dev?code=x`],
  ['percent-encoded reserved prefix', '/%2Egatehouse/sign-out'],
  ['reserved prefix in capitals', '/.GATEHOUSE/sign-out'],
  ['an app’s own Gatehouse endpoint', `${APP}/.gatehouse/complete?code=x`],
  ['the sign-in page', '/sign-in?rd=//evil.com'],
  ['the signed-out page', `${PORTAL}/signed-out`],
  // Size and emptiness.
  ['empty', ''],
  ['too long', `/${'a'.repeat(3000)}`],
  ['relative path', 'evil.com'],
];

describe('return-to check (apps/returnTo.ts)', () => {
  it.each(HOSTILE)('refuses %s', (_label, value) => {
    expect(checkReturnTo(value, policy)).toBeUndefined();
    expect(validateReturnTo(value, policy)).toBe('/account');
  });

  it.each<[string, string]>([
    ['/account', '/account'],
    ['/account?tab=sessions#top', '/account?tab=sessions#top'],
    ['/a/../account', '/account'],
    [`${PORTAL}/admin/users?page=2`, '/admin/users?page=2'],
    [`${APP}/docs?x=1`, `${APP}/docs?x=1`],
    [APP, `${APP}/`],
    ['HTTPS://WIKI.EXAMPLE.COM/Page', `${APP_HTTPS}/Page`],
    // Kept, because the browser reads them as paths on the portal, never as a host.
    ['/%5cevil.com', '/%5cevil.com'],
    ['/%2f%2fevil.com', '/%2f%2fevil.com'],
    ['/%09/evil.com', '/%09/evil.com'],
    ['/.%2e/x', '/x'],
  ])('accepts %s as %s', (input, expected) => {
    expect(checkReturnTo(input, policy)).toBe(expected);
    expect(allowedOrigins.has(browserOrigin(expected))).toBe(true);
  });

  it('refuses on an app host what would leave the app (the handshake’s policy: its own origin only)', () => {
    const appOnly = { portalOrigin: APP };
    for (const value of ['/.//evil.com', `${APP}//evil.com`, `${PORTAL}/account`, '//evil.com', '/%2e%2e//evil.com']) {
      const target = checkReturnTo(value, appOnly);
      expect(target === undefined || browserOrigin(`${APP}${target}`) === APP, value).toBe(true);
      expect(target?.startsWith('//') ?? false, value).toBe(false);
    }
  });

  it('never answers a value a browser resolves off the allowed origins (property, adversarial grammar)', () => {
    const piece = fc.constantFrom(
      '/', '//', '\\', '/\\', '.', '..', '/./', '/../', '%2e', '%2E%2e', '%2f', '%2F', '%5c', '%5C', '%09', '%0a', '%00', '%40',
      '@', '#', '?', ':', ';', ' ', '\t', '\n', '\u3002', '\uff0e', '\uff0f', '\u2215', 'evil.com', 'localhost', 'localhost:4180',
      'whoami.localhost:4180', 'wiki.example.com', '.evil.com', ':443', ':4180', 'http:', 'https:', 'javascript:', 'data:',
      'HTTP://', 'https://', 'http://localhost:4180', APP, APP_HTTPS, 'user:pw@', 'account', '.gatehouse', 'sign-in',
    );
    const value = fc.array(piece, { minLength: 1, maxLength: 10 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(value, (input) => {
        const target = checkReturnTo(input, policy);
        if (target === undefined) return;
        // A Location header or a link resolved from the portal's pages, and from an app's page.
        expect(allowedOrigins.has(browserOrigin(target, PORTAL)), `${JSON.stringify(input)} -> ${target}`).toBe(true);
        expect(target.startsWith('//') || target.startsWith('/\\')).toBe(false);
        // A path target must also stay on the origin it is relative to when read from an app host.
        if (target.startsWith('/')) expect(browserOrigin(target, APP)).toBe(APP);
      }),
      { numRuns: 10_000 },
    );
  }, 60_000);

  it('is idempotent: an accepted value checked again is accepted unchanged (the callback re-checks)', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.constantFrom(PORTAL, APP, APP_HTTPS, ''), (url, origin) => {
        const input = origin ? `${origin}${new URL(url).pathname}${new URL(url).search}` : url;
        const once = checkReturnTo(input, policy);
        if (once !== undefined) expect(checkReturnTo(once, policy)).toBe(once);
      }),
    );
  }, 30_000);
});

/** The whole server in-process (app.inject): what a browser receives, not what a function returns. */
describe('through the server: every Location and every link stays on an allowed origin', () => {
  let app: FastifyInstance;
  let services: Services;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-redirect-'));
    const config = parseConfig(
      {
        publicUrl: PORTAL,
        dataDir,
        apps: [{ id: 'whoami', name: 'Who am I', publicUrl: APP, upstream: 'http://127.0.0.1:9', policy: { allow: [{ anyUser: true }] } }],
      },
      { env: {} },
    );
    const log = pino({ level: 'silent' });
    services = await createServices(config, log);
    app = await buildApp(services, { loggerInstance: log });
  });
  afterAll(async () => {
    await app?.close();
    await services?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // The app host's own handshake start (`/.gatehouse/start`) and the sign-in callback need the real
  // listening server: test/integration/security/open-redirect.test.ts.
  const cases = [...HOSTILE.map(([, value]) => value), '/account', `${APP}/docs`, APP, '/%5cevil.com', `${PORTAL}/admin`];

  it.each(cases)('the sign-in page is told only the server’s verdict on rd=%j', async (rd) => {
    const response = await app.inject({ method: 'GET', url: `/api/providers?rd=${encodeURIComponent(rd)}`, headers: { host: 'localhost:4180' } });
    expect(response.statusCode).toBe(200);
    const { returnTo } = response.json<{ returnTo: { href: string; host: string | null } }>();
    expect(allowedOrigins.has(browserOrigin(returnTo.href))).toBe(true);
    expect(returnTo.href).toBe(validateReturnTo(rd, portalReturnToPolicy(services)));
    // Signed out: no host and no app named (only a signed-in person is told them; test/areas/api.test.ts).
    expect(returnTo.host).toBeNull();
  });

  it('the sign-in page offers "Continue to evil.com" to nobody: an outside rd comes back as the default', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/providers?rd=${encodeURIComponent('https://evil.com/login')}`, headers: { host: 'localhost:4180' } });
    expect(response.json()).toMatchObject({ returnTo: { href: '/account', host: null, appName: null } });
    const ok = await app.inject({ method: 'GET', url: `/api/providers?rd=${encodeURIComponent(`${APP}/x`)}`, headers: { host: 'localhost:4180' } });
    expect(ok.json()).toMatchObject({ returnTo: { href: `${APP}/x`, host: null, appName: null } });
  });

  it.each(cases)('the portal’s app-authorize sends a signed-out browser to sign in with an rd on the app (rd=%j)', async (rd) => {
    const state = 'a'.repeat(43);
    const response = await app.inject({
      method: 'GET',
      url: `/.gatehouse/app-authorize?app=whoami&state=${state}&rd=${encodeURIComponent(rd)}`,
      headers: { host: 'localhost:4180' },
    });
    expect(response.statusCode).toBe(303);
    const location = response.headers.location as string;
    expect(browserOrigin(location)).toBe(PORTAL);
    const carried = new URL(location, PORTAL).searchParams.get('rd')!;
    expect(browserOrigin(carried)).toBe(APP);
  });
});
