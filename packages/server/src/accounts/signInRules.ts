import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { IdentityProfile } from './identityProfile.js';

/**
 * Who may sign in, and as whom: a pure decision over what the database already knows, so the rules can
 * be read and tested as a table (PRODUCT.md "Who may sign in"; issue: linking rules).
 */
export type SignInDecision =
  | { kind: 'existing'; userId: string }
  | { kind: 'link'; userId: string }
  | { kind: 'create' };

export interface SignInFacts {
  provider: Pick<ProviderConfig, 'name' | 'allowedDomains' | 'createUsers' | 'trustEmail'>;
  profile: Pick<IdentityProfile, 'email' | 'emailVerified'>;
  /** The user this (provider, subject) is already linked to, if any. */
  linkedUser?: { id: string; status: 'active' | 'suspended' } | undefined;
  /** Users whose primary email equals the profile's email. */
  usersWithEmail: ReadonlyArray<{ id: string; status: 'active' | 'suspended' }>;
}

export function decideSignIn({ provider, profile, linkedUser, usersWithEmail }: SignInFacts): SignInDecision {
  if (linkedUser?.status === 'suspended') throw new AppError('account_suspended');
  const email = profile.email;
  if (!email || !profile.emailVerified) {
    throw new AppError('sign_in_not_allowed', { params: { email: email ?? 'An account without a verified email' } });
  }
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (provider.allowedDomains.length > 0 && !provider.allowedDomains.includes(domain)) {
    throw new AppError('sign_in_not_allowed', { params: { email } });
  }
  if (linkedUser) return { kind: 'existing', userId: linkedUser.id };

  const owner = usersWithEmail[0];
  if (owner) {
    // Linking by email is an account takeover vector unless the IdP is trusted to verify emails it
    // asserts for this domain: only providers configured with trustEmail may do it.
    if (!provider.trustEmail || usersWithEmail.length > 1) throw new AppError('identity_conflict');
    if (owner.status === 'suspended') throw new AppError('account_suspended');
    return { kind: 'link', userId: owner.id };
  }
  if (!provider.createUsers) throw new AppError('sign_in_not_allowed', { params: { email } });
  return { kind: 'create' };
}

export type LinkDecision = { kind: 'already-linked' } | { kind: 'link' };

export interface LinkFacts {
  provider: Pick<ProviderConfig, 'allowedDomains'>;
  profile: Pick<IdentityProfile, 'email' | 'emailVerified'>;
  /** The signed-in user asking to link. */
  userId: string;
  /** Who this (provider, subject) already belongs to, if anyone. */
  owner?: { id: string } | undefined;
}

/**
 * Linking another provider to the signed-in account. An identity belonging to another user is never
 * moved (that would hand one person's account to whoever controls the other), and the provider's
 * domain list still applies. No email match is needed: the person proved both accounts in one browser.
 */
export function decideLink({ provider, profile, userId, owner }: LinkFacts): LinkDecision {
  if (owner && owner.id !== userId) throw new AppError('identity_conflict');
  if (provider.allowedDomains.length > 0) {
    const email = profile.emailVerified ? profile.email : undefined;
    const domain = email?.slice(email.lastIndexOf('@') + 1);
    if (!domain || !provider.allowedDomains.includes(domain)) {
      throw new AppError('sign_in_not_allowed', { params: { email: email ?? 'An account without a verified email' } });
    }
  }
  return owner ? { kind: 'already-linked' } : { kind: 'link' };
}
