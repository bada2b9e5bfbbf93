import { request as httpRequest, type IncomingMessage } from 'node:http';

/**
 * A small scripted browser for HTTP-level flows: it keeps cookies per host name like a real browser
 * (cookies do not isolate by port, which is exactly why the IdPs use their own cookie names), and it
 * follows redirects only when asked, so each hop can be inspected.
 */
export interface Hop {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

interface StoredCookie {
  value: string;
  attributes: string;
}

export class ScriptedBrowser {
  private readonly jar = new Map<string, Map<string, StoredCookie>>();

  /** The raw Set-Cookie header values seen, newest last. */
  readonly setCookies: string[] = [];

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name)?.value;
  }

  cookieAttributes(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name)?.attributes;
  }

  setCookie(host: string, name: string, value: string): void {
    this.hostJar(host).set(name, { value, attributes: '' });
  }

  deleteCookie(host: string, name: string): void {
    this.jar.get(host)?.delete(name);
  }

  /**
   * Host names this browser resolves to loopback (as browsers do for *.localhost): requests to them go to
   * 127.0.0.1 with the original Host header.
   */
  constructor(private readonly loopbackHosts: readonly string[] = []) {}

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string>; body?: string } = {}): Promise<Hop> {
    const target = new URL(url);
    const headers: Record<string, string> = { 'user-agent': 'gatehouse-test-browser', ...init.headers };
    const cookies = [...(this.jar.get(target.hostname) ?? new Map<string, StoredCookie>()).entries()]
      .map(([name, { value }]) => `${name}=${value}`)
      .join('; ');
    if (cookies) headers.cookie = cookies;
    let body = init.body;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const method = init.method ?? (init.form ? 'POST' : 'GET');
    const loopback = this.loopbackHosts.includes(target.hostname);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpRequest(
        {
          host: loopback ? '127.0.0.1' : target.hostname,
          port: target.port || 80,
          path: `${target.pathname}${target.search}`,
          method,
          headers: { host: target.host, ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
          agent: false,
        },
        resolve,
      );
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

  /** The Cookie header this browser would send to a host. */
  cookieHeader(host: string): string {
    return [...(this.jar.get(host) ?? new Map<string, StoredCookie>()).entries()].map(([name, { value }]) => `${name}=${value}`).join('; ');
  }

  /** Follows redirects (GET) until a non-redirect answer or `stopAt` matches the next URL. */
  async follow(start: Hop, stopAt?: (url: URL) => boolean, limit = 15): Promise<{ hop: Hop; stoppedAt?: URL }> {
    let hop = start;
    for (let i = 0; i < limit; i++) {
      const location = hop.headers.get('location');
      if (hop.status < 300 || hop.status >= 400 || !location) return { hop };
      const next = new URL(location, hop.url);
      if (stopAt?.(next)) return { hop, stoppedAt: next };
      // A navigation, as a browser makes it.
      hop = await this.request(next.href, { headers: { accept: 'text/html,application/xhtml+xml' } });
    }
    throw new Error('too many redirects');
  }

  private hostJar(host: string): Map<string, StoredCookie> {
    let cookies = this.jar.get(host);
    if (!cookies) {
      cookies = new Map();
      this.jar.set(host, cookies);
    }
    return cookies;
  }

  private store(host: string, line: string): void {
    this.setCookies.push(line);
    const [pair = '', ...attributes] = line.split(';');
    const index = pair.indexOf('=');
    const name = pair.slice(0, index).trim();
    const value = pair.slice(index + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
    if (expired || value === '') this.jar.get(host)?.delete(name);
    else this.hostJar(host).set(name, { value, attributes: attributes.join(';').trim() });
  }
}

/** Extracts a hidden or visible input's value from an HTML form. */
export function inputValue(html: string, name: string): string | undefined {
  const match = new RegExp(`<input[^>]*name="${name}"[^>]*>`, 'i').exec(html);
  return match ? /value="([^"]*)"/i.exec(match[0])?.[1] : undefined;
}

export function formAction(html: string): string | undefined {
  return /<form[^>]*action="([^"]*)"/i.exec(html)?.[1]?.replace(/&amp;/g, '&');
}

/**
 * Submits an IdP's login form (`form`, the hop that showed it) and follows the IdP's answer up to, not
 * into, Gatehouse's callback: the callback URL, for the test to request as it needs to.
 */
export async function submitIdpLogin(browser: ScriptedBrowser, form: Hop, login: string, password: string): Promise<URL> {
  const posted = await browser.request(new URL(formAction(form.body)!, form.url).href, { form: { login, password } });
  const { stoppedAt } = await browser.follow(posted, (url) => url.pathname.startsWith('/.gatehouse/callback/'));
  if (!stoppedAt) throw new Error('the IdP did not send the browser back to Gatehouse');
  return stoppedAt;
}

/** A browser signed in at `portal` through the development IdP's real login form, with its CSRF token (alice is an admin there). */
export async function signedInThroughDevIdp(portal: string, login: string, password: string): Promise<{ browser: ScriptedBrowser; csrf: string }> {
  const browser = new ScriptedBrowser();
  const { hop: form } = await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/dev`));
  await browser.follow(await browser.request((await submitIdpLogin(browser, form, login, password)).href));
  return { browser, csrf: JSON.parse((await browser.request(`${portal}/api/csrf`)).body).csrfToken as string };
}
