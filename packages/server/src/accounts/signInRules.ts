import type { SignInRefusalReason } from '@gatehouse/contract';
import type { ProviderConfig } from '../config/schema.js';
import { refusalCodes, signInRefused, type RefusalCode } from '../errors.js';
import { domainRefusal, emailRefusal, judgeAdmission, kindRefusal, type AdmissionProfile, type AdmissionProvider, type AdmissionRefusal, type OrganizationRules } from './admission.js';

/**
 * Who may sign in, and as whom: a pure decision over what the database already knows, so the rules can
 * be read and tested as a table (PRODUCT.md "Who may sign in"; issue: linking rules). Whether the IdP's
 * answer is admitted at all is the admission judge's (admission.ts); this adds who the person is here:
 * the user the identity belongs to, a link by email, a new user, or a refusal.
 *
 * The same judgement keeps a live session: a claims re-check asks it again with what the IdP says now
 * and the session's user as the identity's owner, and anything but "existing, the same user" ends the
 * session (sessions/admissionReview.ts, authenticate/claimsRefresher.ts).
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

export interface SignInFacts {
  provider: AdmissionProvider & Pick<ProviderConfig, 'createUsers' | 'trustEmail'>;
  organization: OrganizationRules;
  profile: AdmissionProfile;
  /**
   * The user this (provider, subject) is already linked to, if any; `primary` when this identity is the
   * one the user's own email and name follow (a sign-in with it makes the user's email the IdP's).
   */
  linkedUser?: { id: string; status: 'active' | 'suspended'; primary?: boolean } | undefined;
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
  const refusal = judgeAdmission({ provider, organization, profile });
  if (refusal) return refuse(refusal.reason, refusal.why, refusal.params);
  const email = profile.email!;
  if (linkedUser) {
    // Threat: an account taking over another user's address. The user's email follows their primary
    // identity; an IdP that now says that identity's email is another user's address (a self-service
    // profile edit, a tenant reusing an address) would make this user that address: admin by
    // `admins.emails`, `emails:` rules, the identity headers, and a later link by email into the wrong
    // user. Refused until an administrator sorts it out; the other user is never touched.
    if (linkedUser.primary && usersWithEmail.some((other) => other.id !== linkedUser.id)) {
      return refuse('email_of_another_user', `${provider.name} now gives this identity the email of another user`, { email });
    }
    return { kind: 'existing', userId: linkedUser.id };
  }

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

export type LinkDecision = { kind: 'already-linked' } | { kind: 'link' };

export interface LinkFacts {
  provider: AdmissionProvider;
  organization: OrganizationRules;
  profile: AdmissionProfile;
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
  const admission = { provider, organization, profile };
  const fail = (refusal: AdmissionRefusal) => signInRefused(refusal.reason, refusal.why, { ...params, ...refusal.params });
  // The kind's own rules (a Workspace domain, a tenant, an organisation) hold for a linked identity too.
  const byKind = kindRefusal(admission);
  if (byKind) throw fail(byKind);
  if (provider.allowedDomains.length > 0 || organization.allowedDomains.length > 0) {
    // A domain list needs an email to check, and a verified one.
    const byEmail = emailRefusal(admission);
    if (byEmail) throw fail({ ...byEmail, why: `a domain list applies and ${byEmail.why}` });
    const byDomain = domainRefusal(admission);
    if (byDomain) throw fail(byDomain);
  }
  return owner ? { kind: 'already-linked' } : { kind: 'link' };
}
