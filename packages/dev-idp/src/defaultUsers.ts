import { createHash } from 'node:crypto';

/** A person who can sign in at the development IdP. */
export interface DevIdpUser {
  /** Subject identifier (`sub`); see {@link subjectFor} for a stable, opaque default. */
  sub: string;
  /** What the person types in the "Email" field; matched case-insensitively. */
  login: string;
  password: string;
  name: string;
  email: string;
  emailVerified: boolean;
  groups: string[];
}

/**
 * A stable subject for a login: the same on every start and every machine, so identities linked in
 * Gatehouse survive a restart of the dev IdP, yet opaque like a real IdP's `sub`, so nothing downstream
 * can get away with assuming `sub` is the email address.
 */
export function subjectFor(login: string): string {
  return createHash('sha256').update(`gatehouse-dev-idp:${login.trim().toLowerCase()}`).digest('base64url').slice(0, 22);
}

function user(login: string, password: string, name: string, groups: string[]): DevIdpUser {
  return { sub: subjectFor(login), login, password, name, email: login, emailVerified: true, groups };
}

/** The accounts a newcomer signs in with (the login page lists them when no users are configured). */
export const defaultUsers: readonly DevIdpUser[] = Object.freeze([
  user('alice@example.com', 'alice', 'Alice Example', ['staff', 'admins']),
  user('bob@example.com', 'bob', 'Bob Example', ['staff']),
]);
