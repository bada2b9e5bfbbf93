import type { Config } from '../config/schema.js';
import type { User } from '../storage/schema.js';
import type { PolicySubject } from '../authorize/policy.js';
import { parseRoles } from './roles.js';

export interface AdminStatus {
  admin: boolean;
  /** Granted by `admins:` in the config file (so the console cannot take it away). */
  fromConfig: boolean;
}

/**
 * Who is an admin: whoever the config names (by email, or by a group their IdP asserts now), plus
 * whoever was granted the role in the console. Group-based admin follows the IdP: remove the group
 * there and the role goes with the next claims check.
 */
export function adminStatus(admins: Config['admins'], user: Pick<User, 'email' | 'roles'>, groups: readonly string[]): AdminStatus {
  const fromConfig = admins.emails.includes(user.email.toLowerCase()) || groups.some((group) => admins.groups.includes(group));
  return { admin: fromConfig || parseRoles(user.roles).includes('admin'), fromConfig };
}

/** Roles as policies see them: stored roles plus admin when the config makes someone one. */
export function effectiveRoles(admins: Config['admins'], user: Pick<User, 'email' | 'roles'>, groups: readonly string[]): string[] {
  const roles = parseRoles(user.roles);
  if (!roles.includes('admin') && adminStatus(admins, user, groups).admin) roles.push('admin');
  return roles;
}

/**
 * What a policy sees of a person: their email, their IdP groups, their roles (config-given admin
 * included) and the scalar claims kept from the IdP. One builder for the proxy, the launcher and the
 * admin console's tester, so all three decide alike.
 */
export function policySubject(
  admins: Config['admins'],
  user: Pick<User, 'email' | 'roles'>,
  groups: readonly string[],
  claims: Readonly<Record<string, unknown>> = {},
): PolicySubject {
  return { email: user.email, groups, roles: effectiveRoles(admins, user, groups), claims };
}
