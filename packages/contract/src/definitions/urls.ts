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
