import { request as httpRequest, type IncomingMessage } from 'node:http';

/**
 * A scripted browser over node:http (fetch cannot set Host): it keeps cookies per host name like a real
 * browser (cookies do not isolate by port), resolves the given host names to 127.0.0.1 (as browsers
 * do for `localhost` and `*.localhost`), and follows redirects only when asked. Adapted from the
 * server's integration-test support (packages/server/test/integration/support/browser.ts), kept here
 * so the benchmark depends on nothing but the built server.
 */
export interface Hop {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

interface RequestInit {
  method?: string;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export const NAVIGATION = { accept: 'text/html,application/xhtml+xml' };

export class ScriptedBrowser {
  private readonly jar = new Map<string, Map<string, string>>();

  constructor(private readonly loopbackHosts: readonly string[]) {}

  /** Another browser with a copy of this one's cookies but those `drop` names: concurrent flows, each with its own jar. */
  clone(drop: (name: string) => boolean = () => false): ScriptedBrowser {
    const copy = new ScriptedBrowser(this.loopbackHosts);
    for (const [host, cookies] of this.jar) copy.jar.set(host, new Map([...cookies].filter(([name]) => !drop(name))));
    return copy;
  }

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  async request(url: string, init: RequestInit = {}): Promise<Hop> {
    const target = new URL(url);
    const headers: Record<string, string> = { 'user-agent': 'gatehouse-bench', ...init.headers };
    const cookies = [...(this.jar.get(target.hostname) ?? new Map<string, string>()).entries()].map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookies) headers.cookie = cookies;
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const loopback = this.loopbackHosts.includes(target.hostname);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpRequest(
        {
          host: loopback ? '127.0.0.1' : target.hostname,
          port: target.port || 80,
          path: `${target.pathname}${target.search}`,
          method: init.method ?? (init.form ? 'POST' : 'GET'),
          headers: { host: target.host, ...headers },
          agent: false,
          timeout: 15_000,
        },
        resolve,
      );
      request.on('timeout', () => request.destroy(new Error(`${url}: no answer within 15 s`)));
      request.on('error', reject);
      request.end(body);
    });
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, item);
    }
    for (const line of responseHeaders.getSetCookie()) this.store(target.hostname, line);
    return { url: target.href, status: response.statusCode ?? 0, headers: responseHeaders, body: Buffer.concat(chunks).toString('utf8') };
  }

  /** Follows redirects as navigations (GET) until a non-redirect answer, or until `stopAt` matches the next URL. */
  async follow(start: Hop, stopAt?: (url: URL) => boolean, limit = 20): Promise<{ hop: Hop; stoppedAt?: URL; trail: string[] }> {
    let hop = start;
    const trail = [`${hop.status} ${hop.url}`];
    for (let i = 0; i < limit; i++) {
      const location = hop.headers.get('location');
      if (hop.status < 300 || hop.status >= 400 || !location) return { hop, trail };
      const next = new URL(location, hop.url);
      if (stopAt?.(next)) return { hop, stoppedAt: next, trail };
      hop = await this.request(next.href, { headers: NAVIGATION });
      trail.push(`${hop.status} ${hop.url}`);
    }
    throw new Error(`too many redirects:\n  ${trail.join('\n  ')}`);
  }

  private store(host: string, line: string): void {
    const [pair = '', ...attributes] = line.split(';');
    const index = pair.indexOf('=');
    if (index < 0) return;
    const name = pair.slice(0, index).trim();
    const value = pair.slice(index + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()));
    let cookies = this.jar.get(host);
    if (!cookies) this.jar.set(host, (cookies = new Map()));
    if (expired || value === '') cookies.delete(name);
    else cookies.set(name, value);
  }
}

export function formAction(html: string): string | undefined {
  return /<form[^>]*action="([^"]*)"/i.exec(html)?.[1]?.replace(/&amp;/g, '&');
}

/**
 * Signs in the way a browser does, from a request to the protected app to its landing page, and
 * returns the app host's `gatehouse_app` cookie:
 *
 *   app /  →  302 app /.gatehouse/start?rd=…  →  303 portal /.gatehouse/app-authorize?…  →  303 portal /sign-in?rd=…
 *   (the React sign-in page is not rendered; its "Sign in with …" button is the link below)
 *   portal /.gatehouse/sign-in/<provider>?rd=…  →  IdP authorize  →  IdP login form
 *   POST login + password  →  IdP  →  portal /.gatehouse/callback/<provider>  →  … app /.gatehouse/complete  →  app /
 */
export async function signInToApp(input: {
  appOrigin: string;
  portalOrigin: string;
  providerId: string;
  login: string;
  password: string;
}): Promise<{ cookieName: string; token: string; trail: string[]; portalCookie: string | undefined }> {
  const appHost = new URL(input.appOrigin).hostname;
  const browser = new ScriptedBrowser([appHost, 'localhost']);
  const trail: string[] = [];
  const fail = (message: string): never => {
    throw new Error(`sign-in: ${message}\n  ${trail.join('\n  ')}`);
  };

  const first = await browser.request(`${input.appOrigin}/`, { headers: NAVIGATION });
  if (first.status !== 302) fail(`the app answered ${first.status}, expected a redirect to sign in`);
  const toSignIn = await browser.follow(first, (url) => url.origin === input.portalOrigin && url.pathname === '/sign-in');
  trail.push(...toSignIn.trail);
  const rd = toSignIn.stoppedAt?.searchParams.get('rd');
  if (!rd) fail(`never reached the portal's /sign-in page (last: ${toSignIn.hop.status} ${toSignIn.hop.url})`);

  const start = await browser.request(`${input.portalOrigin}/.gatehouse/sign-in/${input.providerId}?rd=${encodeURIComponent(rd!)}`, { headers: NAVIGATION });
  const toForm = await browser.follow(start);
  trail.push(...toForm.trail);
  const form = toForm.hop;
  if (form.status !== 200 || !form.body.includes('name="password"')) fail(`expected the IdP's login form, got ${form.status} ${form.url}`);
  const action = formAction(form.body);
  if (!action) fail('the login form has no action');

  const posted = await browser.request(new URL(action!, form.url).href, { form: { login: input.login, password: input.password } });
  const landing = await browser.follow(posted);
  trail.push(...landing.trail);
  if (new URL(landing.hop.url).origin !== input.appOrigin || landing.hop.status !== 200) {
    fail(`expected to land on the app with 200, got ${landing.hop.status} ${landing.hop.url}`);
  }
  const cookieName = 'gatehouse_app';
  const token = browser.cookie(appHost, cookieName);
  if (!token) fail(`landed on the app, but no ${cookieName} cookie was set for ${appHost}`);
  // The portal's own session cookie (not the app's): what the account page sends, e.g. to revoke a session.
  const portalCookie = browser.cookie(new URL(input.portalOrigin).hostname, 'gatehouse_session');
  return { cookieName, token: token!, trail, portalCookie: portalCookie && `gatehouse_session=${portalCookie}` };
}
