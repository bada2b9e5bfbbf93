import type { SignInRefusalReason } from '@gatehouse/contract';

/**
 * Why a sign-in was refused, in a few words, for the reasons the server records (the contract's
 * `signInRefusalReasons`): the console's audit log and test result, and a member's recent activity.
 */
export const SIGN_IN_REFUSALS: Record<SignInRefusalReason, string> = {
  email_missing: 'the provider sent no email',
  email_malformed: 'the provider sent an email Gatehouse cannot use',
  email_unverified: 'the email is not verified at the provider',
  domain_not_allowed_by_provider: "the email's domain is not allowed for this provider",
  domain_not_allowed_by_organization: "the email's domain is not allowed here",
  users_not_created_by_provider: 'this provider does not create new users',
  users_not_created_by_organization: 'new users are not created here',
  account_suspended: 'the account is suspended',
  email_taken: 'another user has this email',
  email_ambiguous: 'several users have this email',
  email_of_another_user: "the provider now gives this account another user's email",
  identity_taken: 'this provider account belongs to another user',
  hosted_domain_not_allowed: "the account's hosted domain is not allowed",
  tenant_not_allowed: "the account's organisation is not allowed",
  organization_not_allowed: 'the provider account is not a member of an allowed organisation',
  claim_not_allowed: 'the provider account does not meet a required condition',
};

/** The words for a recorded reason, or undefined when it is not one this version knows. */
export function signInRefusalLabel(reason: unknown): string | undefined {
  return typeof reason === 'string' && Object.hasOwn(SIGN_IN_REFUSALS, reason) ? SIGN_IN_REFUSALS[reason as SignInRefusalReason] : undefined;
}
