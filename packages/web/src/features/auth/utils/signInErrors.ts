import { ID_PATTERN, isSignInErrorCode, isSignInNotice, type SignInErrorCode } from '@gatehouse/contract/paths';

/**
 * What a person reads when a sign-in attempt ends on `/sign-in?error=<code>&ref=<reference>` (optionally
 * `&provider=<id>`). The codes are the contract's (`signInErrorCodes`: the error catalogue's codes a
 * sign-in can end with, and the notices); the words are this page's, one entry per code.
 *
 * Threat: content injection. Anyone can craft a link to `/sign-in?error=...`, so nothing from the URL is
 * shown as prose: the code picks one of our sentences, the provider id is shown only as the name of a
 * provider we know, and the reference is shown only when it looks like one.
 */

export interface SignInErrorParams {
  /** Display name of the provider involved, when known. */
  provider?: string | undefined;
}

export interface SignInErrorDescription {
  /** The code explained, or `unknown` for one the page does not know (the generic sentence). */
  code: SignInErrorCode | 'unknown';
  title: string;
  message: string;
  /** Not a failure but what the person did themselves: shown as information, not as an error. */
  notice: boolean;
}

interface CatalogueEntry {
  title: string;
  message: (params: SignInErrorParams) => string;
}

const theProvider = (params: SignInErrorParams) => params.provider ?? 'the sign-in provider';
const TheProvider = (params: SignInErrorParams) => params.provider ?? 'The sign-in provider';

/** Every code has its words: a code the contract adds without them here does not compile. */
const catalogue: Record<SignInErrorCode, CatalogueEntry> = {
  provider_unavailable: {
    title: 'Sign-in provider unavailable',
    message: (p) => `We couldn't reach ${theProvider(p)}. Try again in a minute.`,
  },
  provider_misconfigured: {
    title: 'Sign-in provider misconfigured',
    message: (p) => `${TheProvider(p)} is not set up correctly for this site, so signing in with it does not work right now. Tell your administrator.`,
  },
  sign_in_expired: {
    title: 'Sign-in expired',
    message: () => 'This sign-in took too long or was already used. Start again.',
  },
  sign_in_denied: {
    title: 'Sign-in was not completed',
    message: (p) => `${TheProvider(p)} did not sign you in. Try again, or choose another way to sign in.`,
  },
  provider_disabled: {
    title: 'Sign-in provider turned off',
    message: (p) => `Signing in with ${theProvider(p)} is turned off. Choose another way to sign in.`,
  },
  sign_in_not_allowed: {
    title: 'Sign-in not allowed',
    message: () => 'This account may not sign in here. Contact your administrator if you think it should.',
  },
  invalid_response: {
    title: 'Sign-in could not be verified',
    message: (p) => `The answer from ${theProvider(p)} could not be verified.`,
  },
  identity_unlinked: {
    title: 'You unlinked the identity you signed in with',
    message: (p) => `${TheProvider(p)} no longer signs in to your account, so that session ended. Sign in with one of your other providers.`,
  },
  identity_conflict: {
    title: 'Account already exists',
    message: () => 'Sign in with your usual provider, then link this one from your account.',
  },
  account_suspended: {
    title: 'Account suspended',
    message: () => 'Your account is suspended. Contact your administrator.',
  },
  access_denied: {
    title: 'Access denied',
    message: () => 'You are signed in, but you may not open this app. Sign in with another account or ask your administrator.',
  },
  csrf_failed: {
    title: 'Request not verified',
    message: () => 'This request could not be verified. Reload the page and try again.',
  },
  rate_limited: {
    title: 'Too many attempts',
    message: () => 'Too many sign-in attempts. Wait a minute, then try again.',
  },
  bad_request: {
    title: 'Sign-in request not understood',
    message: () => 'The sign-in request could not be understood. Start again.',
  },
  internal: {
    title: 'Something went wrong',
    message: () => 'Something went wrong on our side. Try again, and quote the reference if it keeps happening.',
  },
};

const UNKNOWN: CatalogueEntry = {
  title: 'Sign-in did not complete',
  message: () => 'Something stopped the sign-in. Try again, and quote the reference if it keeps happening.',
};

/** The words for a code from the address; one the page does not know (anyone can write a link) gets the generic ones. */
export function describeSignInError(code: string, params: SignInErrorParams = {}): SignInErrorDescription {
  if (!isSignInErrorCode(code)) return { code: 'unknown', title: UNKNOWN.title, message: UNKNOWN.message(params), notice: false };
  const { title, message } = catalogue[code];
  return { code, title, message: message(params), notice: isSignInNotice(code) };
}

/** The reference id as the server makes them (hex today); anything else is not shown. */
export function sanitizeReference(raw: string | null | undefined): string | undefined {
  return raw && /^[A-Za-z0-9_-]{1,64}$/.test(raw) ? raw : undefined;
}

export interface SignInFailure {
  code: string;
  reference: string | undefined;
  providerId: string | undefined;
}

/**
 * The providers to offer beside a failure: all of them, but after unlinking the identity of the
 * session the unlinked provider no longer signs in to that account, so it is not offered.
 */
export function providersToOffer<P extends { id: string }>(providers: P[], failure: SignInFailure | undefined): P[] {
  if (failure?.code !== 'identity_unlinked' || !failure.providerId) return providers;
  return providers.filter((provider) => provider.id !== failure.providerId);
}

/** Reads `?error=`, `?ref=` and `?provider=` from the sign-in page's query; undefined when no error. */
export function readSignInFailure(search: URLSearchParams): SignInFailure | undefined {
  const code = search.get('error');
  if (!code) return undefined;
  const providerId = search.get('provider');
  return {
    code,
    reference: sanitizeReference(search.get('ref')),
    providerId: providerId && ID_PATTERN.test(providerId) ? providerId : undefined,
  };
}
