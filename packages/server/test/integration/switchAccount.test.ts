import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAction, inputValue, ScriptedBrowser, type Hop } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startUpstream, type Upstream } from './support/upstream.js';

/**
 * "Switch account" on the 403 page of an app host, against the real development IdP. Before, it led to
 * the sign-in page with bob's session still on ("You are already signed in as Bob"), and the IdP, which
 * still had bob's session, signed him straight back in, to be refused again. Now it ends the Gatehouse
 * session (a form post with the app host's CSRF token, as signing out is) and the next sign-in asks the
 * IdP to let the person choose (prompt=select_account, which the development IdP advertises).
 */
let idp: DevIdpProcess;
let upstream: Upstream;
let gatehouse: RunningGatehouse;
let portal: string;
let admins: string;

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  admins = `http://admins.localhost:${port}`;
  idp = await startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`, `${portal}/.gatehouse/callback/dev-plain`], postLogoutRedirectUris: [`${portal}/signed-out`] });
  upstream = await startUpstream();
  gatehouse = await startGatehouse({
    port,
    organization: { name: 'Example', contact: 'the IT desk (it@example.com)' },
    providers: [
      { id: 'dev', name: 'Development IdP', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] },
      // The same IdP without PAR, so the prompt can be read in the authorization URL.
      { id: 'dev-plain', name: 'Development IdP (no PAR)', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', pushedAuthorizationRequests: 'never' },
      // An operator who wants a fresh login on a switch, whatever the IdP offers.
      { id: 'dev-login', name: 'Development IdP (login)', issuer: idp.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', pushedAuthorizationRequests: 'never', chooseAccountPrompt: 'login' },
    ],
    apps: [{ id: 'admins', name: 'Admins only', publicUrl: admins, upstream: upstream.url, policy: { allow: [{ groups: ['admins'] }] } }],
  });
});

afterAll(async () => {
  await gatehouse?.close();
  await upstream?.close();
  await idp?.close();
});

/** Opens the app, signs in at the IdP as `login` when asked, and follows the browser back to the app. */
async function openAppAs(browser: ScriptedBrowser, login: string): Promise<Hop> {
  const first = await browser.request(`${admins}/reports?x=1`, { headers: { accept: 'text/html' } });
  let { hop } = await browser.follow(first, (url) => url.pathname === '/sign-in');
  const signIn = new URL(hop.headers.get('location') ?? hop.url, hop.url);
  if (signIn.pathname === '/sign-in') {
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(signIn.searchParams.get('rd')!)}`);
    ({ hop } = await browser.follow(start));
  }
  if (hop.body.includes('name="password"')) {
    const posted = await browser.request(new URL(formAction(hop.body)!, hop.url).href, { form: { login, password: login.split('@')[0]! } });
    ({ hop } = await browser.follow(posted));
  }
  return hop;
}

describe('Switch account', () => {
  it('ends the session and lets the person choose another account at the IdP', async () => {
    const browser = new ScriptedBrowser(['admins.localhost']);
    const denied = await openAppAs(browser, 'bob@example.com');
    expect(denied.status).toBe(403);
    expect(denied.body).toContain('You are signed in as <strong>bob@example.com</strong>');
    // Whom to ask, and a way back.
    expect(denied.body).toContain('ask the IT desk (it@example.com)');
    expect(denied.body).toContain(`<a class="button secondary" href="${portal}/">Back to your apps</a>`);

    // The 403 page's form: posted on the app host with its own CSRF token and the refused URL.
    const form = /<form method="post" action="\/\.gatehouse\/switch-account">[\s\S]*?<\/form>/.exec(denied.body)![0];
    const switched = await browser.request(`${admins}/.gatehouse/switch-account`, {
      form: { csrf_token: inputValue(form, 'csrf_token')!, rd: inputValue(form, 'rd')! },
      headers: { origin: admins },
    });
    expect(switched.status).toBe(303);
    expect(switched.headers.get('location')).toBe(`${portal}/.gatehouse/switch-account?rd=${encodeURIComponent(`${admins}/reports?x=1`)}`);
    // bob's Gatehouse session is over, on the portal as on the app host.
    expect((await browser.request(`${portal}/api/session`)).status).toBe(401);
    const toSignIn = await browser.request(switched.headers.get('location')!);
    expect(toSignIn.status).toBe(303);
    const signInPage = new URL(toSignIn.headers.get('location')!, portal);
    expect(signInPage.pathname).toBe('/sign-in');
    expect(signInPage.searchParams.get('rd')).toBe(`${admins}/reports?x=1`);

    // The next sign-in asks the IdP to let the person choose: the IdP, which still has bob's session,
    // shows its login form instead of signing bob straight back in.
    // (The prompt travels in the pushed authorization request: the IdP's answer is what shows it.)
    const start = await browser.request(`${portal}/.gatehouse/sign-in/dev?rd=${encodeURIComponent(`${admins}/reports?x=1`)}`);
    expect(start.headers.getSetCookie().join('\n')).toMatch(/gatehouse_choose_account=;/);
    const { hop: login } = await browser.follow(start);
    expect(login.body).toContain('name="password"');
    const posted = await browser.request(new URL(formAction(login.body)!, login.url).href, { form: { login: 'alice@example.com', password: 'alice' } });
    let { hop: app } = await browser.follow(posted);
    // Signing in as someone else ends bob's session at the IdP: its page posts itself (a browser runs
    // its script; this one submits the form).
    if (formAction(app.body)?.includes('/session/end/confirm')) {
      ({ hop: app } = await browser.follow(await browser.request(new URL(formAction(app.body)!, app.url).href, { form: { xsrf: inputValue(app.body, 'xsrf') ?? '', logout: 'yes' } })));
    }
    expect(app.status).toBe(200);
    expect(app.url).toBe(`${admins}/reports?x=1`);
    expect(upstream.last?.headers['x-gatehouse-email']).toBe('alice@example.com');

    // Asked once: the sign-in after that one is a plain one again (the IdP signs alice straight in).
    const { hop: plain } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`));
    expect(plain.body).not.toContain('name="password"');
    expect(new URL(plain.url).origin).toBe(portal);
  });

  it('without switching, the IdP signs the person straight back in (what the prompt changes)', async () => {
    const browser = new ScriptedBrowser(['admins.localhost']);
    await openAppAs(browser, 'bob@example.com');
    const { hop } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`));
    expect(hop.body).not.toContain('name="password"');
  });

  it('asks for the account chooser the IdP advertises (prompt_values_supported), once', async () => {
    const browser = new ScriptedBrowser();
    await browser.request(`${portal}/.gatehouse/switch-account?rd=%2Faccount`);
    const chosen = await browser.request(`${portal}/.gatehouse/sign-in/dev-plain`);
    expect(new URL(chosen.headers.get('location')!).searchParams.get('prompt')).toBe('select_account');
    const plain = await browser.request(`${portal}/.gatehouse/sign-in/dev-plain`);
    expect(new URL(plain.headers.get('location')!).searchParams.get('prompt')).toBeNull();
  });

  it("asks for the provider's configured prompt (chooseAccountPrompt) instead", async () => {
    const browser = new ScriptedBrowser();
    await browser.request(`${portal}/.gatehouse/switch-account?rd=%2Faccount`);
    const chosen = await browser.request(`${portal}/.gatehouse/sign-in/dev-login`);
    expect(new URL(chosen.headers.get('location')!).searchParams.get('prompt')).toBe('login');
  });

  it('needs the app host\'s CSRF token and origin', async () => {
    // Threat: cross-site request forgery. A forged "Switch account" must not end the person's session.
    const browser = new ScriptedBrowser(['admins.localhost']);
    await openAppAs(browser, 'bob@example.com');
    const forged = await browser.request(`${admins}/.gatehouse/switch-account`, { form: { csrf_token: 'forged', rd: `${admins}/` }, headers: { origin: 'http://evil.example' } });
    expect(forged.status).toBe(403);
    expect((await browser.request(`${portal}/api/session`)).status).toBe(200);
  });

  it('carries on only a URL of the app itself', async () => {
    // Threat: open redirect. An rd of another site is replaced by the app's own root.
    const browser = new ScriptedBrowser(['admins.localhost']);
    const denied = await openAppAs(browser, 'bob@example.com');
    const form = /<form method="post" action="\/\.gatehouse\/switch-account">[\s\S]*?<\/form>/.exec(denied.body)![0];
    const switched = await browser.request(`${admins}/.gatehouse/switch-account`, { form: { csrf_token: inputValue(form, 'csrf_token')!, rd: 'https://evil.example/' }, headers: { origin: admins } });
    expect(switched.headers.get('location')).toBe(`${portal}/.gatehouse/switch-account?rd=${encodeURIComponent(`${admins}/`)}`);
    const portalSide = await browser.request(`${portal}/.gatehouse/switch-account?rd=${encodeURIComponent('https://evil.example/')}`);
    expect(portalSide.headers.get('location')).not.toContain('evil.example');
  });
});
