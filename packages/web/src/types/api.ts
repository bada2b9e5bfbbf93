/**
 * Shapes of the Gatehouse JSON API shared by several features (features never import each other, so
 * types that cross feature lines live here). Operation-specific types stay next to their fetcher.
 */

/** RFC 9457 problem details as Gatehouse answers them (`application/problem+json`). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  /** Stable code from the error catalogue, e.g. `csrf_failed`. */
  code?: string;
  /** Reference id that is also in the server log. */
  reference?: string;
}

export interface User {
  id: string;
  email: string;
  name: string;
  groups: string[];
  picture?: string | null;
  /** Effective admin (from the config file or granted in the console): the header shows "Admin". */
  admin: boolean;
}

export interface ProviderRef {
  id: string;
  name: string;
}

export interface SessionInfo {
  /** The session's public handle, never the cookie value. */
  id: string;
  /** ISO 8601 timestamps. */
  createdAt: string;
  expiresAt: string;
  provider: ProviderRef;
}

/** `GET /api/session` */
export interface CurrentSession {
  user: User;
  session: SessionInfo;
}

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | 'other';

/** What the server made of a session's User-Agent. */
export interface Device {
  /** "Chrome 156" */
  browser: string | null;
  /** "Linux" */
  os: string | null;
  type: DeviceType;
}

/** A person as an audit event names them (actor or target). */
export interface UserRef {
  id: string;
  email: string;
}

/**
 * One line of the audit log (`GET /api/admin/audit`, and a user's trail in `GET /api/admin/users/{id}`).
 * Types include `sign_in`, `sign_in_failed`, `sign_out`, `session_revoked`, `identity_linked`,
 * `identity_unlinked`, `backchannel_logout`, `access_denied`, `user_suspended`, `user_reactivated`,
 * `admin_granted`, `admin_revoked`, `app_created`, `app_updated`, `app_deleted`, `provider_created`,
 * `provider_updated`, `provider_enabled`, `provider_disabled`, `provider_deleted`, `provider_tested`,
 * `sign_in_settings_updated`; new ones may appear at any time.
 */
export interface AuditEvent {
  id: string;
  /** ISO 8601. */
  time: string;
  type: string;
  outcome: 'success' | 'failure';
  /** Who did it; null for the system (an expiry) or someone not signed in. */
  actor: UserRef | null;
  /** Whom it concerned, when that is not the actor. */
  target: UserRef | null;
  providerId: string | null;
  /** The protected app it concerned (access_denied), if any. */
  appId?: string | null;
  ip: string | null;
  userAgent: string | null;
  /** Depends on the type (`app` for access_denied, `before`/`after` for admin changes); read defensively. */
  details: Record<string, unknown>;
}
