import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from '../integration/support/browser.js';
import { exchange, LOOPBACK_HOSTS, rawGet, signIn, startProxyRig, type ProxyRig, type RawAnswer } from './support/proxyRig.js';

/**
 * Threat: clickjacking on app hosts. Another site frames a page Gatehouse renders on an app's host — the
 * 403 page, say — under a decoy, and the person clicks its "Sign out" (or "Switch account") without
 * knowing; an answer without nosniff could be read as a script or style by a page that includes it. Every
 * answer Gatehouse itself writes on an app host — pages, problems, redirects, the raw error writer and
 * a refused upgrade — says it may not be framed (CSP frame-ancestors 'none' and X-Frame-Options: DENY),
 * nosniff, and no-referrer. The app's own answers pass through untouched.
 */
let rig: ProxyRig;

beforeAll(async () => {
  rig = await startProxyRig();
}, 30_000);

afterAll(async () => {
  await rig?.close();
});

type Headers = Pick<globalThis.Headers, 'get'> | Record<string, string>;
const get = (headers: Headers, name: string) => (typeof headers.get === 'function' ? (headers as globalThis.Headers).get(name) : (headers as Record<string, string>)[name]) ?? null;

function expectNotFramable(headers: Headers): void {
  expect(get(headers, 'content-security-policy')).toMatch(/(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
  expect(get(headers, 'x-frame-options')).toBe('DENY');
  expect(get(headers, 'x-content-type-options')).toBe('nosniff');
  expect(get(headers, 'referrer-policy')).toBe('no-referrer');
}

const hostOf = (origin: string) => new URL(origin).host;

describe('pages Gatehouse renders on an app host', () => {
  it('the 403 page (its Sign out button is the prize)', async () => {
    const { landing } = await signIn(rig, rig.closed);
    expect(landing.status).toBe(403);
    expect(landing.body).toContain('Sign out');
    expectNotFramable(landing.headers);
  });

  it('the 403 problem for a request that is not a navigation', async () => {
    const { browser } = await signIn(rig, rig.closed);
    const answer = await browser.request(`${rig.closed}/api/x`, { headers: { accept: 'application/json' } });
    expect(answer.status).toBe(403);
    expectNotFramable(answer.headers);
  });

  it('the redirect to sign in, answered on the hot path', async () => {
    const answer = await rawGet(rig, '/reports', [['Accept', 'text/html']]);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toMatch(/^\/\.gatehouse\/start\?rd=/);
    expectNotFramable(answer.headers);
  });

  it('the 401 problem without a session', async () => {
    const answer = await new ScriptedBrowser(LOOPBACK_HOSTS).request(`${rig.app}/api/x`, { headers: { accept: 'application/json' } });
    expect(answer.status).toBe(401);
    expectNotFramable(answer.headers);
  });

  it('an error page under /.gatehouse/ (404)', async () => {
    const answer = await new ScriptedBrowser(LOOPBACK_HOSTS).request(`${rig.app}/.gatehouse/nothing-here`, { headers: { accept: 'text/html' } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expectNotFramable(answer.headers);
  });

  it('the handshake: its start redirect and its error page', async () => {
    const browser = new ScriptedBrowser(LOOPBACK_HOSTS);
    const start = await browser.request(`${rig.app}/.gatehouse/start?rd=%2F`, { headers: { accept: 'text/html' } });
    expect(start.status).toBe(303);
    expectNotFramable(start.headers);
    const complete = await browser.request(`${rig.app}/.gatehouse/complete?code=x&state=y`, { headers: { accept: 'text/html' } });
    expect(complete.status).toBe(400);
    expectNotFramable(complete.headers);
  });

  it('sign-out: the refused form and the redirect', async () => {
    const { browser } = await signIn(rig, rig.closed);
    const refused = await browser.request(`${rig.closed}/.gatehouse/sign-out`, { form: { csrf_token: 'forged' }, headers: { accept: 'text/html', origin: rig.closed } });
    expect(refused.status).toBe(403);
    expectNotFramable(refused.headers);
    const signedOut = await new ScriptedBrowser(LOOPBACK_HOSTS).request(`${rig.closed}/.gatehouse/sign-out`, { form: {}, headers: { accept: 'text/html' } });
    expect(signedOut.status).toBe(303);
    expectNotFramable(signedOut.headers);
  });

  it('the JWKS', async () => {
    const answer = await new ScriptedBrowser(LOOPBACK_HOSTS).request(`${rig.app}/.gatehouse/jwks.json`);
    expect(answer.status).toBe(200);
    expectNotFramable(answer.headers);
  });
});

describe('answers written without Fastify on an app host', () => {
  it('the raw error writer: an upstream that does not answer', async () => {
    const answer = await rawGet(rig, '/public/x', [['Accept', 'text/html']], undefined, hostOf(rig.down));
    expect(answer.status).toBe(502);
    expect(answer.body).toContain('upstream_unavailable');
    expectNotFramable(answer.headers);
  });

  it('a request Node’s parser refuses', async () => {
    const answer: RawAnswer = await exchange(rig, `GET /public/x HTTP/1.1\r\nHost: ${rig.appHost}\r\nX-A: 1\r\n folded\r\n\r\n`);
    expect(answer.status).toBe(400);
    expectNotFramable(answer.headers);
  });

  it('a refused WebSocket upgrade', async () => {
    const answer = await exchange(
      rig,
      `GET /ws HTTP/1.1\r\nHost: ${rig.appHost}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(answer.status).toBe(401);
    expectNotFramable(answer.headers);
  });
});

describe('the app’s own answers', () => {
  // Gatehouse's headers are for its own pages: an app that may be framed (or sets its own CSP) keeps its answer as it is.
  it('pass through without Gatehouse’s headers, for a public path and a signed-in person', async () => {
    const publicAnswer = await rawGet(rig, '/public/x', []);
    expect(publicAnswer.status).toBe(200);
    const { cookie } = await signIn(rig);
    const allowed = await rawGet(rig, '/allowed', [['Cookie', cookie]]);
    expect(allowed.status).toBe(200);
    for (const answer of [publicAnswer, allowed]) {
      for (const name of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy']) expect(answer.headers[name]).toBeUndefined();
    }
  });
});
