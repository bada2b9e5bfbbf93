import { emailDomainOf, type SignInRefusalReason } from '@gatehouse/contract';
import type { ProviderConfig } from '../config/schema.js';
import { refusalCodes, signInRefused, type RefusalCode } from '../errors.js';
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

/**
 * Why a sign-in is refused: the reason (a closed set, audited and logged), the catalogue code people
 * get, a sentence for admins (the audit log, the console's test sign-in), and what the person's
 * sentence names.
 */
export interface SignInRefusal {
  kind: 'refused';
  reason: SignInRefusalReason;
  code: RefusalCode;
  /** For admins only: which rule said no, in words. People see the catalogue's sentence for the reason. */
  why: string;
  params: { provider: string; email?: string; domain?: string };
  /** The user refused, when there is one (a suspended account). */
  userId?: string;
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
  profile: Pick<IdentityProfile, 'email' | 'emailProblem' | 'emailUnverified' | 'emailVerified'>;
  /** The user this (provider, subject) is already linked to, if any. */
  linkedUser?: { id: string; status: 'active' | 'suspended' } | undefined;
  /** Users whose primary email equals the profile's email. */
  usersWithEmail: ReadonlyArray<{ id: string; status: 'active' | 'suspended' }>;
}

/** The decision, or the refusal with its reason (never throws): for the console's test sign-in. */
export function judgeSignIn({ provider, organization, profile, linkedUser, usersWithEmail }: SignInFacts): SignInVerdict {
  const refuse = (reason: SignInRefusalReason, why: string, extra: { email?: string; domain?: string } = {}, userId?: string): SignInRefusal => ({
    kind: 'refused',
    reason,
    code: refusalCodes[reason],
    why,
    params: { provider: provider.name, ...extra },
    ...(userId ? { userId } : {}),
  });
  if (linkedUser?.status === 'suspended') return refuse('account_suspended', 'the user this identity belongs to is suspended', {}, linkedUser.id);
  const email = profile.email;
  // An email the normaliser refused (too long, several @, non-ASCII, ...) is no email: refused with the
  // reason, never checked in a shortened or case-folded form (the contract's definitions/email.ts).
  // The value itself is not repeated: it is whatever the IdP sent, and may be hostile.
  if (!email && profile.emailProblem) return refuse('email_malformed', `the email ${provider.name} sent ${profile.emailProblem}`);
  if (!email && profile.emailUnverified) return refuse('email_unverified', `${provider.name} has no verified primary email for this account`);
  if (!email) return refuse('email_missing', `${provider.name} sent no email`);
  if (!profile.emailVerified) return refuse('email_unverified', `${provider.name} did not say the email is verified`, { email });
  const domainRule = domainRefusal(email, provider, organization);
  if (domainRule) return refuse(domainRule.reason, domainRule.why, { email, domain: domainRule.domain });
  if (linkedUser) return { kind: 'existing', userId: linkedUser.id };

  const owner = usersWithEmail[0];
  if (owner) {
    // Linking by email is an account takeover vector unless the IdP is trusted to verify emails it
    // asserts for this domain: only providers configured with trustEmail may do it.
    if (!provider.trustEmail) return refuse('email_taken', `another user has this email and ${provider.name} is not trusted to link by email`);
    if (usersWithEmail.length > 1) return refuse('email_ambiguous', 'several users have this email');
    if (owner.status === 'suspended') return refuse('account_suspended', 'the user with this email is suspended', {}, owner.id);
    return { kind: 'link', userId: owner.id };
  }
  if (!provider.createUsers) return refuse('users_not_created_by_provider', `${provider.name} does not create users for people unknown to Gatehouse`, { email });
  if (!organization.createUsers) return refuse('users_not_created_by_organization', 'the organisation does not create users for people unknown to Gatehouse', { email });
  return { kind: 'create' };
}

/** A refusal as the error the callback answers, audits and logs. */
export function refusalError(refusal: SignInRefusal) {
  return signInRefused(refusal.reason, refusal.why, refusal.params, refusal.userId);
}

/** The sign-in decision; a refusal is thrown as its catalogue error, carrying the reason. */
export function decideSignIn(facts: SignInFacts): SignInDecision {
  const verdict = judgeSignIn(facts);
  if (verdict.kind === 'refused') throw refusalError(verdict);
  return verdict;
}

/** Which domain rule refuses this email, if any: the provider's list and the organisation's must both admit it. */
function domainRefusal(
  email: string,
  provider: Pick<ProviderConfig, 'name' | 'allowedDomains'>,
  organization: OrganizationRules,
): { reason: Extract<SignInRefusalReason, `domain_${string}`>; why: string; domain: string } | undefined {
  // `email` is canonical (exactly one @, a DNS name after it): its domain is what the mail system reads.
  const domain = emailDomainOf(email);
  if (provider.allowedDomains.length > 0 && !provider.allowedDomains.includes(domain)) {
    return { reason: 'domain_not_allowed_by_provider', why: `${domain} is not among ${provider.name}'s allowed domains`, domain };
  }
  if (organization.allowedDomains.length > 0 && !organization.allowedDomains.includes(domain)) {
    return { reason: 'domain_not_allowed_by_organization', why: `${domain} is not among the organisation's allowed domains`, domain };
  }
  return undefined;
}

export type LinkDecision = { kind: 'already-linked' } | { kind: 'link' };

export interface LinkFacts {
  provider: Pick<ProviderConfig, 'name' | 'allowedDomains'>;
  organization: OrganizationRules;
  profile: Pick<IdentityProfile, 'email' | 'emailProblem' | 'emailUnverified' | 'emailVerified'>;
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
  const params = { provider: provider.name };
  if (owner && owner.id !== userId) throw signInRefused('identity_taken', `this ${provider.name} account is linked to another user`, params);
  if (provider.allowedDomains.length > 0 || organization.allowedDomains.length > 0) {
    // A domain list needs an email to check, and a verified one.
    if (!profile.email) throw signInRefused(profile.emailProblem ? 'email_malformed' : profile.emailUnverified ? 'email_unverified' : 'email_missing', `a domain list applies and ${provider.name} sent no usable email`, params);
    if (!profile.emailVerified) throw signInRefused('email_unverified', `a domain list applies and ${provider.name} did not say the email is verified`, { ...params, email: profile.email });
    const domainRule = domainRefusal(profile.email, provider, organization);
    if (domainRule) throw signInRefused(domainRule.reason, domainRule.why, { ...params, email: profile.email, domain: domainRule.domain });
  }
  return owner ? { kind: 'already-linked' } : { kind: 'link' };
}
