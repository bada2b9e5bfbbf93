import type { Config } from '../config/schema.js';
import type { User } from '../storage/schema.js';
import type { IdentityGroups } from './effectiveGroups.js';
import { parseRoles } from './roles.js';

export interface AdminStatus {
  admin: boolean;
  /** Granted by `admins:` in the config file (so the console cannot take it away). */
  fromConfig: boolean;
}

/**
 * Who is an admin: whoever the config names (by email, or by a group that the named provider asserts
 * now), plus whoever was granted the role in the console. Group-based admin follows the IdP: remove the
 * group there and the role goes with the next claims check. Threat: a group from any other provider
 * (a contractor IdP asserting `admins`) never counts, nor does one from a provider turned off.
 *
 * `identities` are the groups of the identity the session signed in with (one), or of every identity
 * of the user when no session is meant (the console's user list: "admin when signed in with …").
 */
export function adminStatus(admins: Config['admins'], user: Pick<User, 'email' | 'roles'>, identities: IdentityGroups | readonly IdentityGroups[]): AdminStatus {
  // Both sides are canonical (the contract's definitions/email.ts): compared as they are, never case-mapped here.
  const fromConfig = admins.emails.includes(user.email) || adminByGroup(admins, identities);
  return { admin: fromConfig || parseRoles(user.roles).includes('admin'), fromConfig };
}

function adminByGroup(admins: Config['admins'], identities: IdentityGroups | readonly IdentityGroups[]): boolean {
  if (admins.groups.length === 0) return false;
  const list: readonly IdentityGroups[] = isList(identities) ? identities : [identities];
  return list.some(({ providerId, asserted }) => providerId !== undefined && admins.groups.some((entry) => entry.provider === providerId && asserted.includes(entry.group)));
}

function isList(identities: IdentityGroups | readonly IdentityGroups[]): identities is readonly IdentityGroups[] {
  return Array.isArray(identities);
}

/** Roles as policies see them: stored roles plus admin when the config makes someone one. */
export function effectiveRoles(admins: Config['admins'], user: Pick<User, 'email' | 'roles'>, groups: IdentityGroups): string[] {
  const roles = parseRoles(user.roles);
  if (!roles.includes('admin') && adminStatus(admins, user, groups).admin) roles.push('admin');
  return roles;
}
