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

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Hop> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookies = [...(this.jar.get(target.hostname) ?? new Map<string, StoredCookie>()).entries()]
      .map(([name, { value }]) => `${name}=${value}`)
      .join('; ');
    if (cookies) headers.set('cookie', cookies);
    headers.set('user-agent', headers.get('user-agent') ?? 'gatehouse-test-browser');
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers.set('content-type', 'application/x-www-form-urlencoded');
    }
    const response = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) this.store(target.hostname, line);
    return { url: target.href, status: response.status, headers: response.headers, body: await response.text() };
  }

  /** Follows redirects (GET) until a non-redirect answer or `stopAt` matches the next URL. */
  async follow(start: Hop, stopAt?: (url: URL) => boolean, limit = 15): Promise<{ hop: Hop; stoppedAt?: URL }> {
    let hop = start;
    for (let i = 0; i < limit; i++) {
      const location = hop.headers.get('location');
      if (hop.status < 300 || hop.status >= 400 || !location) return { hop };
      const next = new URL(location, hop.url);
      if (stopAt?.(next)) return { hop, stoppedAt: next };
      hop = await this.request(next.href);
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
