import { emailDomainOf, type Policy, type PolicyRule } from '@gatehouse/contract';
import { effectiveRoles } from '../accounts/admins.js';
import type { IdentityGroups } from '../accounts/effectiveGroups.js';
import type { Config } from '../config/schema.js';
import type { User } from '../storage/schema.js';

// The policy's shape and validation are the contract's (definitions/policy.ts); deciding with it is authorize's.

export interface PolicySubject {
  email: string;
  groups: readonly string[];
  roles: readonly string[];
  /** Scalar claims kept from the IdP. */
  claims: Readonly<Record<string, unknown>>;
}

export interface PolicyDecision {
  allow: boolean;
  /** The rule that decided, or null when nothing matched (default deny). */
  decidedBy: { list: 'allow' | 'deny'; index: number; rule: PolicyRule } | null;
  /** One line for people: "allowed by allow[0]: groups staff". */
  reason: string;
}

/**
 * Deny wins; with no allow rule matching the answer is deny. A pure function of the policy and the
 * subject, naming the rule that decided, so the admin console and the logs can say why.
 */
export function evaluatePolicy(policy: Policy, subject: PolicySubject): PolicyDecision {
  for (const [index, candidate] of policy.deny.entries()) {
    if (matches(candidate, subject)) {
      return { allow: false, decidedBy: { list: 'deny', index, rule: candidate }, reason: `denied by deny[${index}]: ${describeRule(candidate)}` };
    }
  }
  for (const [index, candidate] of policy.allow.entries()) {
    if (matches(candidate, subject)) {
      return { allow: true, decidedBy: { list: 'allow', index, rule: candidate }, reason: `allowed by allow[${index}]: ${describeRule(candidate)}` };
    }
  }
  return { allow: false, decidedBy: null, reason: 'denied: no allow rule matched' };
}

/** A rule's label (`allow[0]`), made once per position rather than once per request. */
const ruleLabels = { allow: [] as string[], deny: [] as string[] };

/**
 * The label metrics and the access log give the rule that decided: its place in the policy
 * (`allow[0]`, `deny[2]`), or `default` when no allow rule matched.
 */
export function ruleLabel(decidedBy: PolicyDecision['decidedBy']): string {
  return decidedBy ? (ruleLabels[decidedBy.list][decidedBy.index] ??= `${decidedBy.list}[${decidedBy.index}]`) : 'default';
}

function matches(candidate: PolicyRule, subject: PolicySubject): boolean {
  if ('anyUser' in candidate) return true;
  // subject.email is canonical (the contract's definitions/email.ts) and so are the listed values: compared as they are,
  // never case-mapped here (a Unicode toLowerCase would turn U+212A KELVIN SIGN into "k").
  if ('emails' in candidate) return candidate.emails.includes(subject.email);
  if ('domains' in candidate) return candidate.domains.includes(emailDomainOf(subject.email));
  if ('groups' in candidate) return candidate.groups.some((group) => subject.groups.includes(group));
  if ('roles' in candidate) return candidate.roles.some((role) => subject.roles.includes(role));
  // claim = value: exact, type-sensitive; a claim holding an array matches when it contains the value.
  const value = subject.claims[candidate.claim.name];
  return Array.isArray(value) ? value.includes(candidate.claim.value) : value === candidate.claim.value;
}

export function describeRule(candidate: PolicyRule): string {
  if ('anyUser' in candidate) return 'any signed-in user';
  if ('emails' in candidate) return `emails ${candidate.emails.join(', ')}`;
  if ('domains' in candidate) return `domains ${candidate.domains.join(', ')}`;
  if ('groups' in candidate) return `groups ${candidate.groups.join(', ')}`;
  if ('roles' in candidate) return `roles ${candidate.roles.join(', ')}`;
  return `claim ${candidate.claim.name} = ${JSON.stringify(candidate.claim.value)}`;
}

/**
 * What a policy sees of a person: their email, the groups and claims that count from the identity they
 * signed in with (accounts/effectiveGroups.ts: by its provider's trust) and their roles (config-given
 * admin included). One builder for the proxy, the launcher and the admin console's tester, so all three
 * decide alike.
 */
export function policySubject(admins: Config['admins'], user: Pick<User, 'email' | 'roles'>, identity: IdentityGroups): PolicySubject {
  return { email: user.email, groups: identity.counted, roles: effectiveRoles(admins, user, identity), claims: identity.claims };
}
