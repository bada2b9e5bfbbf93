import { z } from 'zod';

/**
 * What the audit log records, each type named once: the server records only these (its `record()`
 * takes an `AuditEventType`), the audit API's `type` filter accepts only these, and the console words
 * each one (its words are a `Record<AuditEventType, …>`, so a new type without words does not compile).
 * The names are stable: they are stored, filtered on and exported as CSV.
 */
export const auditEventTypes = [
  // Sign-ins and sessions: a person's own doing, or done to their sessions.
  /** A sign-in that succeeded. */
  'sign_in',
  /** A sign-in that failed or was refused (`details`: `{ provider, code, reason?, why? }`). */
  'sign_in_failed',
  /** A person signed out (`details.everywhere` when all their sessions ended). */
  'sign_out',
  /** A session ended by someone or something else than signing out (`details.by`: user, admin, idp, system). */
  'session_revoked',
  /** A person linked another provider's identity to their account (a failed link has outcome `failure`). */
  'identity_linked',
  /** A person unlinked one of their identities. */
  'identity_unlinked',
  /** The identity provider ended sessions (OpenID Connect Back-Channel Logout). */
  'backchannel_logout',
  /** A signed-in person an app's policy does not let in (`details.app`). */
  'access_denied',
  /**
   * An app's sign-in with Gatehouse (an OpenID Provider grant) ended by the person ("Sign out of <app>")
   * or by an administrator (`details`: `{ by: user|admin, app, reason, grantId, sessionId }`).
   */
  'oidc_grant_revoked',
  /**
   * A person answered a third-party app's consent page: allowed it the scopes asked, or refused
   * (`details`: `{ app, scopes }`, the scopes granted or refused).
   */
  'oidc_consent_given',
  'oidc_consent_refused',
  /**
   * An OpenID Connect app took the logout token of a grant whose session ended (Back-Channel Logout;
   * `details`: `{ app, attempts, reason }`).
   */
  'oidc_logout_delivered',
  /**
   * Gatehouse gave up telling an OpenID Connect app of a logout: the retries ran out, or the app no
   * longer takes logout tokens (`details`: `{ app, attempts, reason, error }`).
   */
  'oidc_logout_failed',
  // What administrators changed (`details`: `before`/`after` where something changed).
  'user_suspended',
  'user_reactivated',
  'admin_granted',
  'admin_revoked',
  'app_created',
  'app_updated',
  'app_deleted',
  /** Written by a migration: a console app on a host an older one had, kept aside. */
  'app_set_aside',
  /** A console app's OpenID Connect client secret made or revoked (details: its id and hint, never the secret). */
  'client_secret_created',
  'client_secret_revoked',
  'provider_created',
  'provider_updated',
  'provider_enabled',
  'provider_disabled',
  'provider_deleted',
  /** An administrator's test sign-in with a provider (the console shows its result from this event). */
  'provider_tested',
  'provider_published',
  'sign_in_settings_updated',
  /** The configuration file read again (SIGHUP or the console), applied or refused. */
  'config_reloaded',
] as const;

export const auditEventType = z.enum(auditEventTypes);
export type AuditEventType = z.output<typeof auditEventType>;

const known: ReadonlySet<string> = new Set(auditEventTypes);

/** Whether a string (from an address, a stored row) names a type this version records. */
export function isAuditEventType(value: string): value is AuditEventType {
  return known.has(value);
}
