import { DEFAULT_RETURN_TO, RESERVED_PREFIX } from '../paths.js';

/**
 * Validates where a person may be sent after sign-in (open-redirect defence). Allowed: a path on the
 * portal, or an absolute http(s) URL on the portal or on one of the configured app origins. Everything
 * else, including anything ambiguous, falls back to the default: fail closed.
 */
export interface ReturnToPolicy {
  portalOrigin: string;
  /** Origins of protected apps (exact scheme://host:port). */
  appOrigins?: ReadonlySet<string>;
}

const MAX_LENGTH = 2048;

export function validateReturnTo(value: unknown, policy: ReturnToPolicy): string {
  return checkReturnTo(value, policy) ?? DEFAULT_RETURN_TO;
}

/** The normalised target, or undefined when it is not allowed. */
export function checkReturnTo(value: unknown, { portalOrigin, appOrigins }: ReturnToPolicy): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH) return undefined;
  // Control characters, whitespace and backslashes are read differently by browsers and URL parsers
  // ("/\evil.com", "/\t/evil.com"): refuse them outright rather than normalise.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point here
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(value)) return undefined;

  if (value.startsWith('/')) {
    if (value.startsWith('//')) return undefined; // protocol-relative: another host
    const url = new URL(value, portalOrigin);
    if (url.origin !== portalOrigin) return undefined;
    return portalTarget(url);
  }

  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  if (url.origin === portalOrigin) return portalTarget(url);
  if (appOrigins?.has(url.origin)) return url.href;
  return undefined;
}

function portalTarget(url: URL): string | undefined {
  // Gatehouse's own endpoints are never a destination (no bouncing into sign-out or a callback).
  if (url.pathname === RESERVED_PREFIX || url.pathname.startsWith(`${RESERVED_PREFIX}/`)) return undefined;
  return `${url.pathname}${url.search}${url.hash}`;
}
