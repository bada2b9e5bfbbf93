import { pages, type SignInErrorCode } from '@gatehouse/contract';

/**
 * Where someone goes after unlinking the identity their session signed in with (the server ended that
 * session): the sign-in page, which says what happened and offers the other providers.
 */
export function signInAfterUnlinkHref(providerId: string): string {
  const code: SignInErrorCode = 'identity_unlinked';
  const query = new URLSearchParams({ error: code, provider: providerId });
  return `${pages.signIn.href()}?${query.toString()}`;
}
