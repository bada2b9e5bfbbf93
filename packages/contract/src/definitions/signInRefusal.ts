import { z } from 'zod';

/**
 * Why a sign-in (or a link) was refused: a small closed set, recorded as `reason` in the audit event
 * and the log line of the refusal, and shown in the console. The sign-in rules compute it; a provider's
 * own claim checks (a hosted domain, a tenant, a membership) raise one too. Each maps to one catalogue
 * code (`sign_in_not_allowed`, `account_suspended`, `identity_conflict`); the reason picks the sentence
 * a person reads under that code, so no new code is needed for a finer reason.
 */
export const signInRefusalReasons = [
  /** The provider sent no email at all. */
  'email_missing',
  /** The provider sent a value that is not a usable email (too long, several @, non-ASCII, ...). */
  'email_malformed',
  /** The provider did not say the email is verified. */
  'email_unverified',
  /** The email's domain is not in the provider's `allowedDomains`. */
  'domain_not_allowed_by_provider',
  /** The email's domain is not in the organisation's allowed domains (console, "Who may sign in"). */
  'domain_not_allowed_by_organization',
  /** A person unknown to Gatehouse, and the provider does not create users. */
  'users_not_created_by_provider',
  /** A person unknown to Gatehouse, and the organisation does not create users. */
  'users_not_created_by_organization',
  /** The user this identity (or this email) belongs to is suspended. */
  'account_suspended',
  /** Another user has this email and the provider is not trusted to link by email. */
  'email_taken',
  /** Several users have this email: nobody can tell which to link. */
  'email_ambiguous',
  /** A user's own identity now has the email of another user (it would take over that address). */
  'email_of_another_user',
  /** Linking: this provider account already belongs to another user. */
  'identity_taken',
  /** A provider's own check: the account's hosted domain (Google `hd`) is not the one required. */
  'hosted_domain_not_allowed',
  /** A provider's own check: the account's tenant or organisation (Entra `tid`, ...) is not allowed. */
  'tenant_not_allowed',
  /** A provider's own check: the account is not a member of an allowed organisation (GitHub `allowedOrganizations`). */
  'organization_not_allowed',
  /** A provider's own check: a claim it requires is missing or has another value. */
  'claim_not_allowed',
] as const;

export const signInRefusalReason = z.enum(signInRefusalReasons);
export type SignInRefusalReason = z.output<typeof signInRefusalReason>;
