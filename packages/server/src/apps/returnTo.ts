import { DEFAULT_RETURN_TO, pages, RESERVED_PREFIX } from '@gatehouse/contract';

/**
 * Validates where a person may be sent after sign-in (open-redirect defence). This is the one rule:
 * every place that reads a return-to (`rd`) — portal sign-in start, the app host's handshake, the
 * callback before it redirects, and the sign-in page through `GET /api/providers?rd=` — asks it.
 *
 * Allowed: a path on the portal, or an absolute http(s) URL on the portal or on one of the configured
 * app origins. Everything else, including anything ambiguous, falls back to the default: fail closed.
 */
export interface ReturnToPolicy {
  /** The origin a path is relative to (the portal's, or an app's for the app-host handshake). */
  portalOrigin: string;
  /** Origins of protected apps (exact scheme://host:port). */
  appOrigins?: ReadonlySet<string>;
  /** Paths on portalOrigin that are never a destination (the sign-in page itself, ...). */
  notDestinations?: ReadonlySet<string>;
}

const MAX_LENGTH = 2048;

/** Portal pages it makes no sense to come back to after signing in. */
const PORTAL_NOT_DESTINATIONS: ReadonlySet<string> = new Set([pages.signIn.path, pages.signedOut.path]);

/** The policy for a return-to on the portal: the portal itself or any configured app. */
export function portalReturnToPolicy(deps: { portalOrigin: string; apps: { origins(): ReadonlySet<string> } }): ReturnToPolicy {
  return { portalOrigin: deps.portalOrigin, appOrigins: deps.apps.origins(), notDestinations: PORTAL_NOT_DESTINATIONS };
}

export function validateReturnTo(value: unknown, policy: ReturnToPolicy): string {
  return checkReturnTo(value, policy) ?? DEFAULT_RETURN_TO;
}

/** The normalised target, or undefined when it is not allowed. */
export function checkReturnTo(value: unknown, policy: ReturnToPolicy): string | undefined {
  const target = candidate(value, policy);
  // Whatever produced it, the value must resolve, as a browser resolves a Location header against the
  // page's own origin, to an allowed origin. Threat: "/.//evil.com" normalised to "//evil.com", which a
  // browser reads as another host. This last check holds even if a rule above is wrong.
  if (target === undefined || target.length > MAX_LENGTH || !landsOnAllowedOrigin(target, policy)) return undefined;
  return target;
}

function candidate(value: unknown, { portalOrigin, appOrigins, notDestinations }: ReturnToPolicy): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH) return undefined;
  // Control characters, whitespace and backslashes are read differently by browsers and URL parsers
  // ("/\evil.com", "/\t/evil.com"): refuse them outright rather than normalise.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point here
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(value)) return undefined;

  if (value.startsWith('/')) {
    if (value.startsWith('//')) return undefined; // protocol-relative: another host
    const url = parse(value, portalOrigin);
    if (!url || url.origin !== portalOrigin) return undefined;
    return portalTarget(url, notDestinations);
  }

  const url = parse(value);
  if (!url) return undefined;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  if (url.origin === portalOrigin) return portalTarget(url, notDestinations);
  // On an app the same path rules hold: the app host's handshake turns this URL back into a path.
  if (appOrigins?.has(url.origin)) return isUnsafePath(url.pathname) || isReserved(url.pathname) ? undefined : url.href;
  return undefined;
}

/**
 * A target on the path's own origin, as a path. Dot segments are resolved by the URL parser, so
 * "/.//evil.com", "/..//evil.com", "/%2e%2e//evil.com" and "http://portal//evil.com" all come out with
 * a pathname of "//evil.com": such a path is refused, never collapsed (fail closed).
 */
function portalTarget(url: URL, notDestinations: ReadonlySet<string> | undefined): string | undefined {
  const { pathname } = url;
  if (isUnsafePath(pathname)) return undefined;
  // Gatehouse's own endpoints are never a destination (no bouncing into sign-out or a callback).
  if (isReserved(pathname)) return undefined;
  if (notDestinations?.has(pathname)) return undefined;
  return `${pathname}${url.search}${url.hash}`;
}

/** A pathname a browser would read as a host when it stands alone ("//evil.com", "/\\evil.com"). */
function isUnsafePath(pathname: string): boolean {
  return !pathname.startsWith('/') || pathname.startsWith('//') || pathname.startsWith('/\\');
}

/**
 * `/.gatehouse` or below it, however its letters are written or its ASCII percent-encoded ("/%2Egatehouse"
 * reaches the same route).
 */
function isReserved(pathname: string): boolean {
  const decoded = pathname.replace(/%([0-7][0-9a-f])/gi, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))).toLowerCase();
  return decoded === RESERVED_PREFIX || decoded.startsWith(`${RESERVED_PREFIX}/`);
}

function landsOnAllowedOrigin(target: string, { portalOrigin, appOrigins }: ReturnToPolicy): boolean {
  if (target.startsWith('/') && (target.startsWith('//') || target.startsWith('/\\'))) return false;
  const resolved = parse(target, portalOrigin);
  if (!resolved) return false;
  return resolved.origin === portalOrigin || appOrigins?.has(resolved.origin) === true;
}

function parse(value: string, base?: string): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}
