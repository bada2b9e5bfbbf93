import type { GroupTrustLookup } from '../accounts/effectiveGroups.js';
import { sessionGroups } from '../accounts/effectiveGroups.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';

/**
 * The claims each scope releases (OpenID Connect Core §5.4, and `groups`). oidc-provider keeps to
 * these: a claim of a scope the client was not granted never leaves, whatever `claims()` returns.
 */
export const SCOPE_CLAIMS = {
  openid: ['sub', 'sid', 'auth_time', 'amr', 'acr'],
  email: ['email', 'email_verified'],
  profile: ['name', 'picture', 'preferred_username'],
  groups: ['groups'],
} as const;

/**
 * What Gatehouse says of the person of a Gatehouse session. `sub` is the Gatehouse user id (made
 * pairwise per client by oidc-provider's `pairwiseIdentifier` where the client asks for it). The email
 * is verified only when the identity this session was signed in with says so of that same address.
 * Groups count as everywhere else: only those of a provider whose groups are trusted, of this session.
 * `picture` only when it is an https URL (it is shown by apps as an image).
 */
export function personClaims(providers: GroupTrustLookup, current: CurrentSession): Record<string, unknown> {
  const { user, identity } = current;
  const groups = sessionGroups(providers, current).counted;
  const emailVerified = identity.email_verified === 1 && identity.email?.toLowerCase() === user.email;
  return {
    sub: user.id,
    email: user.email,
    email_verified: emailVerified,
    name: user.name,
    ...(user.picture?.startsWith('https://') ? { picture: user.picture } : {}),
    groups: [...groups],
  };
}
