import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser, type Hop } from '../support/browser.js';
import { freePort } from '../../support/ports.js';
import { startGatehouse, type RunningGatehouse } from '../support/gatehouse.js';
import { startHostileIdp, type HostileIdp } from '../support/hostileIdp.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * Threat class: open redirect after sign-in (CWE-601), through the real listening server and a real
 * OIDC round trip. The review's case: `rd=/.//evil.com/phish` was stored as `//evil.com/phish` and the
 * callback answered `303 Location: //evil.com/phish`, which a browser follows to evil.com. Every hop a
 * browser makes here — callback, app-host handshake, its completion — must stay on the portal or the app.
 */
const HOSTILE_RD = [
  '/.//evil.com/phish',
  '/..//evil.com',
  '/%2e%2e//evil.com',
  '/%2E%2E//evil.com',
  '/.%2e//evil.com',
  '/a/..//evil.com',
  '//evil.com',
  '/\\evil.com',
  '/%09/evil.com',
  '/%5cevil.com',
  'https://evil.com/',
  'https://evil.com#@localhost',
  'javascript:alert(1)',
];

describe('open redirect through the real server', () => {
  let idp: HostileIdp;
  let upstream: Upstream;
  let gatehouse: RunningGatehouse;
  let port: number;
  let portal = '';
  let app = '';

  beforeAll(async () => {
    idp = await startHostileIdp('gatehouse');
    upstream = await startUpstream();
    port = await freePort();
    portal = `http://localhost:${port}`;
    app = `http://whoami.localhost:${port}`;
    gatehouse = await startGatehouse({
      port,
      providers: [{ id: 'hostile', name: 'Hostile IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
      apps: [{ id: 'whoami', name: 'Who am I', publicUrl: app, upstream: upstream.url, policy: { allow: [{ anyUser: true }] } }],
    });
  });
  afterAll(async () => {
    await gatehouse?.close();
    await upstream?.close();
    await idp?.close();
  });

  const allowed = () => new Set([portal, app]);
  const where = (hop: Hop) => new URL(hop.headers.get('location')!, hop.url);

  /** Signs in with `rd` and answers the callback's own response (its Location is what is checked). */
  async function callbackFor(browser: ScriptedBrowser, rd: string): Promise<Hop> {
    const start = await browser.request(`${portal}/.gatehouse/sign-in/hostile?rd=${encodeURIComponent(rd)}`, { headers: { accept: 'text/html' } });
    expect(start.status).toBe(303);
    const { stoppedAt } = await browser.follow(start, (url) => url.pathname.startsWith('/.gatehouse/callback/'));
    return browser.request(stoppedAt!.href, { headers: { accept: 'text/html' } });
  }

  it.each(HOSTILE_RD)('the callback never answers a Location off the portal for rd=%j', async (rd) => {
    const callback = await callbackFor(new ScriptedBrowser(), rd);
    expect(callback.status).toBe(303);
    const location = callback.headers.get('location')!;
    expect(location.startsWith('//')).toBe(false);
    expect(where(callback).origin).toBe(portal);
  });

  it('the reported case lands on the default page', async () => {
    const callback = await callbackFor(new ScriptedBrowser(), '/.//evil.com/phish');
    expect(callback.headers.get('location')).toBe('/account');
  });

  it.each([`${portal}//evil.com`, `http://localhost:PORT//evil.com/phish`])('portal origin + // (%s) lands on the default page', async (template) => {
    const callback = await callbackFor(new ScriptedBrowser(), template.replace('PORT', String(port)));
    expect(callback.headers.get('location')).toBe('/account');
  });

  it('an app URL is still a destination (the fixture itself works)', async () => {
    const callback = await callbackFor(new ScriptedBrowser(), `${app}/docs?x=1`);
    expect(callback.headers.get('location')).toBe(`${app}/docs?x=1`);
  });

  it.each([...HOSTILE_RD, '/.gatehouse/sign-out', `${app}//evil.com`, `${app}/.//evil.com`, `${portal}/account`])(
    'the app host’s handshake keeps every hop on the app or the portal for rd=%j',
    async (rd) => {
      const browser = new ScriptedBrowser(['whoami.localhost']);
      // Signed in first, so the handshake runs to its end (start → app-authorize → complete → rd).
      await callbackFor(browser, '/account');
      const start = await browser.request(`${app}/.gatehouse/start?rd=${encodeURIComponent(rd)}`, { headers: { accept: 'text/html' } });
      expect(start.status).toBe(303);
      const hops: URL[] = [];
      const { hop } = await browser.follow(start, (url) => {
        hops.push(url);
        return false;
      });
      expect(hops.length).toBeGreaterThanOrEqual(3);
      for (const url of hops) expect(allowed().has(url.origin), url.href).toBe(true);
      // It ends on the app itself (the upstream answered), never anywhere else.
      expect(new URL(hop.url).origin).toBe(app);
      expect(hop.status).toBe(200);
    },
  );
});
