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

/**
 * The second development issuer's people ("Partner IdP"): alice has an account there too, under another
 * email, so linking two identities to one Gatehouse user can be tried; carol exists only there.
 */
export const partnerUsers: readonly DevIdpUser[] = Object.freeze([
  user('alice@partner.example', 'alice', 'Alice Partner', ['partners']),
  user('carol@partner.example', 'carol', 'Carol Partner', ['partners']),
]);

/** Built-in user sets by name (DEV_IDP_USER_SET); their logins are listed on the login page. */
export const builtInUserSets: Readonly<Record<string, readonly DevIdpUser[]>> = Object.freeze({
  default: defaultUsers,
  partner: partnerUsers,
});
