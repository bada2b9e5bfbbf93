import { emailDomainOf } from '@gatehouse/contract';
import type { ProviderConfig } from '../config/schema.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { IdentityProfile } from './identityProfile.js';

/**
 * Who may sign in, and as whom: a pure decision over what the database already knows, so the rules can
 * be read and tested as a table (PRODUCT.md "Who may sign in"; issue: linking rules).
 *
 * Two sets of rules must both admit a person: the provider's own (allowedDomains, createUsers,
 * trustEmail) and the organisation's, set in the admin console for every provider at once. The
 * organisation's can only narrow what a provider allows, never widen it.
 */
export type SignInDecision =
  | { kind: 'existing'; userId: string }
  | { kind: 'link'; userId: string }
  | { kind: 'create' };

/** Why a sign-in is refused, in the catalogue's code plus a sentence for admins (the console's test sign-in). */
export interface SignInRefusal {
  kind: 'refused';
  code: Extract<ErrorCode, 'sign_in_not_allowed' | 'account_suspended' | 'identity_conflict'>;
  /** Shown to admins only: which rule said no. People see the catalogue's sentence. */
  why: string;
  email?: string | undefined;
}

export type SignInVerdict = SignInDecision | SignInRefusal;

/** The organisation-wide rules (admin console, "Who may sign in"). */
export interface OrganizationRules {
  /** Email domains anyone must have, whatever the provider; empty means any domain. */
  allowedDomains: readonly string[];
  /** Whether people unknown to Gatehouse may get a user at all (each provider must allow it too). */
  createUsers: boolean;
}

/** The rules as they were before any were set: the providers' own decide alone. */
export const OPEN_ORGANIZATION: OrganizationRules = { allowedDomains: [], createUsers: true };

export interface SignInFacts {
  provider: Pick<ProviderConfig, 'name' | 'allowedDomains' | 'createUsers' | 'trustEmail'>;
  organization: OrganizationRules;
  profile: Pick<IdentityProfile, 'email' | 'emailProblem' | 'emailVerified'>;
  /** The user this (provider, subject) is already linked to, if any. */
  linkedUser?: { id: string; status: 'active' | 'suspended' } | undefined;
  /** Users whose primary email equals the profile's email. */
  usersWithEmail: ReadonlyArray<{ id: string; status: 'active' | 'suspended' }>;
}

/** The decision, or the refusal with its reason (never throws): for the console's test sign-in. */
export function judgeSignIn({ provider, organization, profile, linkedUser, usersWithEmail }: SignInFacts): SignInVerdict {
  const refuse = (code: SignInRefusal['code'], why: string, email?: string): SignInRefusal => ({ kind: 'refused', code, why, email });
  if (linkedUser?.status === 'suspended') return refuse('account_suspended', 'the user this identity belongs to is suspended');
  const email = profile.email;
  // An email the normaliser refused (too long, several @, non-ASCII, ...) is no email: refused with the
  // reason, never checked in a shortened or case-folded form (the contract's definitions/email.ts).
  if (!email && profile.emailProblem) {
    return refuse('sign_in_not_allowed', `the email ${provider.name} sent ${profile.emailProblem}`, 'An account without a usable email');
  }
  if (!email || !profile.emailVerified) {
    return refuse('sign_in_not_allowed', email ? `${provider.name} did not say the email is verified` : `${provider.name} sent no email`, email ?? 'An account without a verified email');
  }
  const domainRule = domainRefusal(email, provider, organization);
  if (domainRule) return refuse('sign_in_not_allowed', domainRule, email);
  if (linkedUser) return { kind: 'existing', userId: linkedUser.id };

  const owner = usersWithEmail[0];
  if (owner) {
    // Linking by email is an account takeover vector unless the IdP is trusted to verify emails it
    // asserts for this domain: only providers configured with trustEmail may do it.
    if (!provider.trustEmail) return refuse('identity_conflict', `another user has this email and ${provider.name} is not trusted to link by email`);
    if (usersWithEmail.length > 1) return refuse('identity_conflict', 'several users have this email');
    if (owner.status === 'suspended') return refuse('account_suspended', 'the user with this email is suspended');
    return { kind: 'link', userId: owner.id };
  }
  if (!provider.createUsers) return refuse('sign_in_not_allowed', `${provider.name} does not create users for people unknown to Gatehouse`, email);
  if (!organization.createUsers) return refuse('sign_in_not_allowed', 'the organisation does not create users for people unknown to Gatehouse', email);
  return { kind: 'create' };
}

/** The sign-in decision; a refusal is thrown as its catalogue error. */
export function decideSignIn(facts: SignInFacts): SignInDecision {
  const verdict = judgeSignIn(facts);
  if (verdict.kind === 'refused') throw new AppError(verdict.code, verdict.email ? { params: { email: verdict.email } } : {});
  return verdict;
}

/** Which domain rule refuses this email, if any: the provider's list and the organisation's must both admit it. */
function domainRefusal(email: string, provider: Pick<ProviderConfig, 'name' | 'allowedDomains'>, organization: OrganizationRules): string | undefined {
  // `email` is canonical (exactly one @, a DNS name after it): its domain is what the mail system reads.
  const domain = emailDomainOf(email);
  if (provider.allowedDomains.length > 0 && !provider.allowedDomains.includes(domain)) return `${domain} is not among ${provider.name}'s allowed domains`;
  if (organization.allowedDomains.length > 0 && !organization.allowedDomains.includes(domain)) return `${domain} is not among the organisation's allowed domains`;
  return undefined;
}

export type LinkDecision = { kind: 'already-linked' } | { kind: 'link' };

export interface LinkFacts {
  provider: Pick<ProviderConfig, 'name' | 'allowedDomains'>;
  organization: OrganizationRules;
  profile: Pick<IdentityProfile, 'email' | 'emailVerified'>;
  /** The signed-in user asking to link. */
  userId: string;
  /** Who this (provider, subject) already belongs to, if anyone. */
  owner?: { id: string } | undefined;
}

/**
 * Linking another provider to the signed-in account. An identity belonging to another user is never
 * moved (that would hand one person's account to whoever controls the other), and the domain lists
 * (the provider's and the organisation's) still apply. No email match is needed: the person proved
 * both accounts in one browser.
 */
export function decideLink({ provider, organization, profile, userId, owner }: LinkFacts): LinkDecision {
  if (owner && owner.id !== userId) throw new AppError('identity_conflict');
  if (provider.allowedDomains.length > 0 || organization.allowedDomains.length > 0) {
    const email = profile.emailVerified ? profile.email : undefined;
    if (!email || domainRefusal(email, provider, organization)) {
      throw new AppError('sign_in_not_allowed', { params: { email: email ?? 'An account without a verified email' } });
    }
  }
  return owner ? { kind: 'already-linked' } : { kind: 'link' };
}
