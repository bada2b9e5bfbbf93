/** Where a person lands after signing in when the sign-in page was not told (`/sign-in` without `?rd=`). */
export const DEFAULT_RETURN_TO = '/account';

const MAX_RETURN_TO_LENGTH = 2048;

/** Pages it makes no sense to come back to after signing in. */
const NOT_A_DESTINATION = new Set(['/sign-in', '/signed-out']);

/** Stands in for this origin when resolving a path, so the check does not depend on the browser. */
const PATH_BASE = 'https://gatehouse.invalid';

/**
 * `http(s)://` followed by a non-empty authority without userinfo (`@`), then the end or a `/`, `?`, `#`.
 * Backslashes and control characters are refused before this runs.
 */
const ABSOLUTE_URL = /^https?:\/\/[^/?#@]+(?:[/?#]|$)/i;

// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\\\u0000-\u001f\u007f-\u009f]/;

export interface SanitizeReturnToOptions {
  /**
   * This page's own origin (`window.location.origin`): an absolute URL pointing here is held to the
   * same rules as a path (never back to the sign-in or signed-out page).
   */
  ownOrigin?: string | undefined;
}

/**
 * Keeps a return-to value only when it is a path on this host, or an absolute `http:`/`https:` URL
 * without credentials (a protected app that sent the person here to sign in).
 *
 * Threat: open redirect. The server is the one that decides: it accepts an absolute URL only on the
 * origin of a configured app and falls back to `/account` otherwise. This only keeps the front end from
 * forwarding what is plainly not a destination:
 * - a path needs a single leading `/`; `//` (scheme-relative) is refused;
 * - an absolute URL must be `http:` or `https:` with `//` and a host, and no userinfo
 *   (`https://portal@evil.example` reads like the portal but goes elsewhere); `javascript:`, `data:` and
 *   every other scheme are refused;
 * - a backslash or a control character anywhere is refused, because browsers read `\` as `/` and drop
 *   tabs and newlines, which turns `/\evil.example` or `/<TAB>/evil.example` into `//evil.example`;
 * - so is anything longer than 2048 characters.
 * A path is returned as given; an absolute URL in the form the URL parser gave it (what was checked is
 * what is forwarded).
 */
export function sanitizeReturnTo(
  raw: string | null | undefined,
  fallback: string = DEFAULT_RETURN_TO,
  options: SanitizeReturnToOptions = {},
): string {
  if (!raw || raw.length > MAX_RETURN_TO_LENGTH) return fallback;
  if (UNSAFE_CHARACTERS.test(raw)) return fallback;

  if (raw.startsWith('/')) {
    if (raw.startsWith('//')) return fallback;
    // Belt and braces: whatever the string looks like, resolved against this origin it must stay here.
    const resolved = parse(raw, PATH_BASE);
    if (!resolved || resolved.origin !== PATH_BASE) return fallback;
    if (NOT_A_DESTINATION.has(resolved.pathname)) return fallback;
    return raw;
  }

  if (!ABSOLUTE_URL.test(raw)) return fallback;
  const url = parse(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fallback;
  if (url.username || url.password || !url.hostname) return fallback;
  if (url.href.length > MAX_RETURN_TO_LENGTH) return fallback;
  if (options.ownOrigin && url.origin === options.ownOrigin && NOT_A_DESTINATION.has(url.pathname)) return fallback;
  return url.href;
}

function parse(value: string, base?: string): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

/**
 * The host of an absolute return-to (`whoami.localhost:4180`), to name it in a link; undefined for a
 * path on this host.
 */
export function returnToHost(returnTo: string): string | undefined {
  if (returnTo.startsWith('/')) return undefined;
  return parse(returnTo)?.host || undefined;
}

/**
 * The address that starts a sign-in with one provider: the server's `startUrl` plus the return-to path.
 * The browser navigates there (a full page load), never fetches it: the server answers with a redirect
 * to the IdP and sets the short-lived cookie that binds the attempt to this browser.
 */
export function signInStartHref(startUrl: string, returnTo: string): string {
  const separator = startUrl.includes('?') ? '&' : '?';
  return `${startUrl}${separator}rd=${encodeURIComponent(returnTo)}`;
}
