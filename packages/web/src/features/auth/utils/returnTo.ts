/** Where a person lands after signing in when the sign-in page was not told (`/sign-in` without `?rd=`). */
export const DEFAULT_RETURN_TO = '/account';

const MAX_RETURN_TO_LENGTH = 2048;

/** Pages it makes no sense to come back to after signing in. */
const NOT_A_DESTINATION = new Set(['/sign-in', '/signed-out']);

/**
 * Keeps a return-to value only when it is a path on this host.
 *
 * Threat: open redirect. `/sign-in?rd=//evil.example` would otherwise send a freshly signed-in person to
 * another site. A single leading `/` is required; `//` (scheme-relative) is refused, and so are a
 * backslash and control characters, because browsers read `\` as `/` and drop tabs and newlines, which
 * turns `/\evil.example` or `/<TAB>/evil.example` into `//evil.example`. The server validates again;
 * this only keeps the front end from forwarding what the server would refuse.
 */
export function sanitizeReturnTo(raw: string | null | undefined, fallback: string = DEFAULT_RETURN_TO): string {
  if (!raw || raw.length > MAX_RETURN_TO_LENGTH) return fallback;
  if (!raw.startsWith('/') || raw.startsWith('//')) return fallback;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return fallback;
  // Belt and braces: whatever the string looks like, resolved against this origin it must stay here.
  const base = 'https://gatehouse.invalid';
  let resolved: URL;
  try {
    resolved = new URL(raw, base);
  } catch {
    return fallback;
  }
  if (resolved.origin !== base) return fallback;
  if (NOT_A_DESTINATION.has(resolved.pathname)) return fallback;
  return raw;
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
