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
