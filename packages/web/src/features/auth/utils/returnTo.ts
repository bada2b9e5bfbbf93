/**
 * Return-to on the sign-in page. The page decides nothing itself: it sends its `rd` to the server
 * (`GET /api/providers?rd=`) and links only to the server's verdict, because only the server knows the
 * app origins and one rule on one side cannot disagree with another (Threat: open redirect — a signed-in
 * person offered "Continue to evil.example").
 */

/**
 * The address that starts a sign-in with one provider: the server's `startUrl` plus the return-to the
 * server accepted. The browser navigates there (a full page load), never fetches it: the server answers
 * with a redirect to the IdP and sets the short-lived cookie that binds the attempt to this browser.
 */
export function signInStartHref(startUrl: string, returnTo: string): string {
  const separator = startUrl.includes('?') ? '&' : '?';
  return `${startUrl}${separator}rd=${encodeURIComponent(returnTo)}`;
}
