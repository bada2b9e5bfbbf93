import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedBrowser } from './support/browser.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startHostileIdp, type HostileIdp, type HostileMode } from './support/hostileIdp.js';

// Threat: an IdP (or whoever sits between Gatehouse and it) answers with tokens that must not be
// believed. Every such answer ends on `invalid_response` and creates no session.
describe('answers that fail verification', () => {
  let idp: HostileIdp;
  let gatehouse: RunningGatehouse;

  beforeAll(async () => {
    idp = await startHostileIdp('gatehouse');
    gatehouse = await startGatehouse({
      providers: [{ id: 'hostile', name: 'Hostile IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 's', createUsers: true }],
    });
  });
  afterAll(async () => {
    await gatehouse?.close();
    await idp?.close();
  });

  async function signIn(mode: HostileMode) {
    idp.mode = mode;
    const browser = new ScriptedBrowser();
    const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/hostile`, { headers: { accept: 'text/html' } });
    expect(start.status).toBe(303);
    const { hop } = await browser.follow(start);
    return { browser, hop };
  }

  it('an honest answer signs in (the fixture itself works)', async () => {
    const { browser, hop } = await signIn('honest');
    expect(hop.status).toBe(200);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeDefined();
  });

  it.each<[HostileMode, string]>([
    ['wrong-key', 'ID token signed with a key the IdP does not publish'],
    ['unsigned', 'alg "none" ID token'],
    ['wrong-issuer', 'ID token from another issuer'],
    ['wrong-audience', 'ID token for another client'],
    ['future-iat', 'ID token issued an hour in the future'],
    ['wrong-nonce', 'ID token replayed from another attempt (nonce)'],
    ['mix-up-iss', 'authorization response naming another issuer (RFC 9207)'],
    ['userinfo-other-sub', 'userinfo about another subject'],
  ])('%s: %s', async (mode) => {
    const { browser, hop } = await signIn(mode);
    expect(hop.status).toBe(502);
    expect(hop.headers.get('content-type')).toMatch(/^text\/html/);
    expect(hop.body).toContain('The answer from Hostile IdP could not be verified.');
    expect(hop.body).toMatch(/Reference <code>[0-9a-f]{12}<\/code>/);
    expect(browser.cookie('localhost', 'gatehouse_session')).toBeUndefined();
  });
});
