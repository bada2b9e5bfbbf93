import { z } from 'zod';

export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

/** The URL a value names, or undefined when it names none (the format check reports that one). */
export function parsedUrl(value: string): URL | undefined {
  return URL.canParse(value) ? new URL(value) : undefined;
}

/** An origin such as https://auth.example.com: the scheme, host and port only. */
export const originUrl = httpUrl.refine(
  (value) => {
    const url = parsedUrl(value);
    return !url || ((url.pathname === '/' || url.pathname === '') && !url.search && !url.hash && !url.username);
  },
  { message: 'must be an origin such as https://auth.example.com (no path, query or credentials)' },
);

/** A dotted-quad IPv4 address (each part 0-255, no leading zeros), as Node's `isIPv4` reads one. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * Loopback hosts: the only place plain-http IdPs are tolerated (the development IdP, tests). Written
 * without Node's `net` module: the front end checks provider definitions with the same rule.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (IPV4.test(host)) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1';
}
