/**
 * What the sign-in page's `?error=` may name (`/sign-in?error=<code>&ref=<reference>&provider=<id>`): the
 * page explains each in its own words (a `Record<SignInErrorCode, …>`, so a code added here without words
 * does not compile), and anything else, which anyone can put in a link, in a generic sentence.
 * No zod here: the sign-in page's small bundle reads this through `@gatehouse/contract/paths`.
 */

/**
 * The error catalogue's codes a sign-in attempt can end with (docs/errors.md): each is a code of the
 * server's catalogue, and every code whose error page leads back to the sign-in page is one of them
 * (packages/server/test/signInErrorCodes.test.ts holds the server to both).
 */
export const signInFailureCodes = [
  'provider_unavailable',
  'provider_misconfigured',
  'sign_in_expired',
  'sign_in_denied',
  'provider_disabled',
  'sign_in_not_allowed',
  'invalid_response',
  'identity_conflict',
  'account_suspended',
  'access_denied',
  'csrf_failed',
  'rate_limited',
  'bad_request',
  'internal',
] as const;

/**
 * Not failures but what the person did themselves, said as information: `identity_unlinked`, where the
 * account page sends someone who unlinked the identity their session signed in with (that session ended).
 */
export const signInNoticeCodes = ['identity_unlinked'] as const;

export const signInErrorCodes = [...signInFailureCodes, ...signInNoticeCodes] as const;
export type SignInFailureCode = (typeof signInFailureCodes)[number];
export type SignInNoticeCode = (typeof signInNoticeCodes)[number];
export type SignInErrorCode = (typeof signInErrorCodes)[number];

const known: ReadonlySet<string> = new Set(signInErrorCodes);
const notices: ReadonlySet<string> = new Set(signInNoticeCodes);

/** Whether a value (from the address: anyone's to choose) is a code the sign-in page explains. */
export function isSignInErrorCode(value: string): value is SignInErrorCode {
  return known.has(value);
}

/** Whether a code says what the person did rather than what went wrong. */
export function isSignInNotice(code: SignInErrorCode): code is SignInNoticeCode {
  return notices.has(code);
}
