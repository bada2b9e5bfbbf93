import type { Policy, PolicyRule } from '../api/getAdminApps';

/** A rule in the server's own words ("groups staff, ops"), as the policy tester's reasons name it. */
export function describeRule(rule: PolicyRule): string {
  if ('anyUser' in rule) return 'any signed-in user';
  if (rule.claim) return `claim ${rule.claim.name} = ${rule.claim.value}`;
  if (rule.emails) return `emails ${rule.emails.join(', ')}`;
  if (rule.domains) return `domains ${rule.domains.join(', ')}`;
  if (rule.groups) return `groups ${rule.groups.join(', ')}`;
  if (rule.roles) return `roles ${rule.roles.join(', ')}`;
  return 'unknown rule';
}

/** "Allow: groups staff · Deny: emails x"; a policy without allow rules lets nobody in. */
export function summarizePolicy(policy: Policy | undefined): string {
  const allow = policy?.allow ?? [];
  const deny = policy?.deny ?? [];
  const parts = [`Allow: ${allow.length > 0 ? allow.map(describeRule).join('; ') : 'nobody'}`];
  if (deny.length > 0) parts.push(`Deny: ${deny.map(describeRule).join('; ')}`);
  return parts.join(' · ');
}

/** The deciding part of a policy test's answer. */
export interface PolicyDecisionView {
  allow: boolean;
  decidedBy: { list: 'allow' | 'deny'; index: number; rule: PolicyRule } | null;
}

/**
 * The verdict in the form's own words: "Allowed by allow rule 1: groups staff", counting rules from 1
 * as the form's "Allow rule 1" does, never the server's `allow[0]`.
 */
export function describeDecision(decision: PolicyDecisionView): string {
  if (!decision.decidedBy) return 'Denied: no allow rule matched.';
  const { list, index, rule } = decision.decidedBy;
  return `${decision.allow ? 'Allowed' : 'Denied'} by ${list} rule ${index + 1}: ${describeRule(rule)}.`;
}
