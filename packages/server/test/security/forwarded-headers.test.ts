import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { canonical, FAMILY } from './support/headerFamilies.js';
import { rawGet, received, signIn, startProxyRig, TRUSTED_PROXY, UNTRUSTED_PEER, type ProxyRig } from './support/proxyRig.js';

/**
 * Forwarded- and rewrite-header spoofing through Gatehouse's reverse proxy, end to end: a real upstream
 * records what reached it. Threat: an app that honours X-Original-URL / X-Rewrite-URL (IIS, Symfony,
 * Laravel, Spring) serves the path in the header, not the one Gatehouse judged, so any public path
 * becomes a way to every private one; an app that reads X-Real-IP, True-Client-IP & co. logs and
 * rate-limits whatever address the client made up; X-HTTP-Method-Override makes a GET judged on a
 * public path act as a DELETE. None of them reaches an app, in any spelling, from anyone — a trusted
 * proxy included: Gatehouse sets X-Forwarded-For/-Proto/-Host/-Port and X-Real-IP itself.
 */
let rig: ProxyRig;

beforeAll(async () => {
  rig = await startProxyRig();
}, 30_000);

afterAll(async () => {
  await rig?.close();
});

const FAMILY_NAMES = new Set(FAMILY.map(canonical));

/** A value that is clearly the client's, per header (a path for the rewrite ones, an address, a method...). */
const SPOOFED: Record<string, string> = {
  'x-original-url': '/private/secret',
  'x-rewrite-url': '/private/secret',
  'x-original-uri': '/private/secret',
  'x-forwarded-uri': '/private/secret',
  'x-forwarded-prefix': '/private',
  'x-forwarded-path': '/private/secret',
  'x-envoy-original-path': '/private/secret',
  'x-script-name': '/private',
  forwarded: 'for=203.0.113.66;host=evil.example;proto=https',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'https',
  'x-forwarded-port': '8443',
  'x-forwarded-ssl': 'on',
  'front-end-https': 'on',
  'x-http-method-override': 'DELETE',
  'x-http-method': 'DELETE',
  'x-method-override': 'DELETE',
  'x-original-method': 'DELETE',
  'x-forwarded-method': 'DELETE',
};
const spoofed = (name: string) => SPOOFED[canonical(name)] ?? '203.0.113.66';

/** The spellings a client may use and an upstream may still read as the header (case, `_` for `-`). */
const SPELLINGS: Array<[string, (name: string) => string]> = [
  ['as documented', (name) => name],
  ['lower case', (name) => name.toLowerCase()],
  ['upper case', (name) => name.toUpperCase()],
  ['underscores', (name) => name.replaceAll('-', '_')],
  ['lower-case underscores', (name) => name.toLowerCase().replaceAll('-', '_')],
  ['one underscore', (name) => name.replace('-', '_')],
];

/** What the upstream must see of the families: exactly Gatehouse's own values, under Node's spelling. */
function expectOnlyGatehouseValues(headers: Record<string, string>, ours: Record<string, string>): void {
  const family = Object.fromEntries(Object.entries(headers).filter(([name]) => FAMILY_NAMES.has(canonical(name))));
  expect(family).toEqual(ours);
}

const oursFrom = (rig: ProxyRig, clientAddress: string, forwardedFor = clientAddress) => ({
  'x-forwarded-for': forwardedFor,
  'x-real-ip': clientAddress,
  'x-forwarded-host': rig.appHost,
  'x-forwarded-proto': 'http',
  'x-forwarded-port': String(rig.port),
});

describe('forwarded and rewrite headers from an untrusted peer', () => {
  // Threat: X-Original-URL / X-Rewrite-URL turn a public path into a private one at the app.
  it.each(SPELLINGS)('none reaches the app on a public path, spelled in %s', async (_label, spell) => {
    const answer = await rawGet(rig, '/public/page', FAMILY.map((name) => [spell(name), spoofed(name)] as const));
    const seen = received(answer);
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/public/page');
    expectOnlyGatehouseValues(seen.headers, oursFrom(rig, UNTRUSTED_PEER));
  });

  // Threat: the same with a session: the app would serve the rewrite target with the person's identity.
  it('none reaches the app for a signed-in person either', async () => {
    const { cookie } = await signIn(rig);
    const answer = await rawGet(rig, '/allowed', [['Cookie', cookie], ...FAMILY.map((name) => [name.replaceAll('-', '_'), spoofed(name)] as const)]);
    const seen = received(answer);
    expect(seen.url).toBe('/allowed');
    expect(seen.headers['x-gatehouse-email']).toBe('mallory@example.com');
    expectOnlyGatehouseValues(seen.headers, oursFrom(rig, UNTRUSTED_PEER));
  });

  // Threat: method override. A GET judged on a public path must not act as a DELETE at the app.
  it.each(['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override', 'X-Original-Method', 'x_http_method_override'])('%s: DELETE is dropped from a public GET', async (name) => {
    const seen = received(await rawGet(rig, '/public/item', [[name, 'DELETE']]));
    expect(seen.method).toBe('GET');
    expect(Object.keys(seen.headers).filter((header) => canonical(header).includes('method'))).toEqual([]);
  });
});

describe('forwarded and rewrite headers from a trusted proxy', () => {
  // PRODUCT.md: forwarded headers are believed only from trusted proxies — believed by Gatehouse, which
  // derives the client address from X-Forwarded-For; the app gets that, not the proxy's other headers.
  it.each(SPELLINGS)('only the X-Forwarded-For chain is believed, spelled in %s', async (_label, spell) => {
    const lines = FAMILY.filter((name) => name !== 'X-Forwarded-For').map((name) => [spell(name), spoofed(name)] as const);
    const answer = await rawGet(rig, '/public/page', [['X-Forwarded-For', '198.51.100.7'], ...lines], TRUSTED_PROXY);
    const seen = received(answer);
    expect(seen.url).toBe('/public/page');
    expectOnlyGatehouseValues(seen.headers, oursFrom(rig, '198.51.100.7', `198.51.100.7, ${TRUSTED_PROXY}`));
  });

  // Threat: a rewrite header passed on by a trusted proxy still names a path Gatehouse never judged.
  it.each(['X-Original-URL', 'X-Rewrite-URL', 'X-Original-URI', 'X-Forwarded-Uri', 'X-Forwarded-Prefix'])('%s never reaches the app, even from it', async (name) => {
    const seen = received(await rawGet(rig, '/public/page', [[name, '/private/secret']], TRUSTED_PROXY));
    expect(seen.url).toBe('/public/page');
    expect(Object.keys(seen.headers).some((header) => canonical(header) === canonical(name))).toBe(false);
  });

  // Threat: an X-Forwarded-For spelled with underscores slipping past the trust check into the app.
  it('an underscore X-Forwarded-For is no chain at all', async () => {
    const seen = received(await rawGet(rig, '/public/page', [['X_Forwarded_For', '203.0.113.66']], TRUSTED_PROXY));
    expectOnlyGatehouseValues(seen.headers, oursFrom(rig, TRUSTED_PROXY));
  });
});

describe('forwarded and rewrite headers on a WebSocket upgrade', () => {
  // Threat: the same spoofing through the WebSocket bridge, which builds its own upstream handshake.
  it('the upstream handshake carries only Gatehouse’s values', async () => {
    const { cookie } = await signIn(rig);
    const headers = Object.fromEntries(FAMILY.map((name) => [name.replaceAll('-', '_'), spoofed(name)]));
    const socket = new WebSocket(`ws://127.0.0.1:${rig.port}/ws`, { headers: { host: rig.appHost, cookie, 'X-Original-URL': '/private', ...headers } });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
      socket.once('error', reject);
    });
    socket.close();
    expectOnlyGatehouseValues(rig.upstream.lastUpgrade as Record<string, string>, oursFrom(rig, UNTRUSTED_PEER));
  });
});
