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
