import { expect } from 'vitest';
import { ScriptedBrowser } from './browser.js';
import type { RunningGatehouse } from './gatehouse.js';

/**
 * A browser signed in at the portal with `providerId` and, when `appOrigin` is given, at that app host
 * too, through the real handshake: the app host sends the signed-out person to /sign-in?rd=..., the
 * person picks the provider, the IdP answers, the portal hands the app host its one-time code.
 */
export async function signedInBrowser(gatehouse: RunningGatehouse, providerId: string, options: { appOrigin?: string; loopbackHosts?: string[] } = {}): Promise<ScriptedBrowser> {
  const browser = new ScriptedBrowser(options.loopbackHosts ?? []);
  if (!options.appOrigin) {
    const { hop } = await browser.follow(await browser.request(`${gatehouse.url}/.gatehouse/sign-in/${providerId}`));
    expect(hop.status).toBe(200);
    return browser;
  }
  const first = await browser.request(`${options.appOrigin}/`, { headers: { accept: 'text/html' } });
  expect(first.status).toBe(302);
  let { hop } = await browser.follow(first);
  const signIn = new URL(hop.url);
  if (signIn.pathname === '/sign-in') {
    const start = await browser.request(`${gatehouse.url}/.gatehouse/sign-in/${providerId}?rd=${encodeURIComponent(signIn.searchParams.get('rd')!)}`);
    ({ hop } = await browser.follow(start));
  }
  expect(new URL(hop.url).origin).toBe(options.appOrigin);
  return browser;
}
