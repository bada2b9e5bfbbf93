import { z } from 'zod';
import { emailDomainOf, emailDomainSchema, emailSchema } from '../accounts/email.js';

/**
 * Access policies: allow rules and deny rules; deny wins, and with no allow rule matching the answer is
 * deny. Evaluation is a pure function of the policy and the subject, and names the rule that decided,
 * so the admin console and the logs can say why.
 */
export const KNOWN_ROLES = ['admin'] as const;

const nonEmptyList = (item: z.ZodType<string>) => z.array(item).min(1, 'must list at least one value');
/** Claims Gatehouse keeps per identity and so can evaluate (see accounts/identityProfile.ts). */
const claimName = z.string().regex(/^[A-Za-z0-9_:.-]{1,64}$/, 'must be a claim name');

export type PolicyRule =
  | { anyUser: true }
  | { emails: string[] }
  | { domains: string[] }
  | { groups: string[] }
  | { roles: Array<(typeof KNOWN_ROLES)[number]> }
  | { claim: { name: string; value: string | number | boolean } };

const RULE_KINDS = ['anyUser', 'emails', 'domains', 'groups', 'roles', 'claim'] as const;

/**
 * One rule is an object with exactly one of the rule kinds. Written as one strict object (rather than
 * a union) so that a bad value is reported at its own path ("allow[0].roles[0]: must be one of …").
 */
const rule = z
  .object({
    anyUser: z.literal(true, { error: 'must be true' }).optional(),
    // The one email normaliser (accounts/email.ts): a listed value is written exactly as a person's
    // email is, so the comparison below is plain string equality.
    emails: nonEmptyList(emailSchema).optional(),
    domains: nonEmptyList(emailDomainSchema).optional(),
    groups: nonEmptyList(z.string().min(1).max(256)).optional(),
    roles: nonEmptyList(z.enum(KNOWN_ROLES, { error: `must be one of: ${KNOWN_ROLES.join(', ')}` })).optional(),
    claim: z.object({ name: claimName, value: z.union([z.string(), z.number(), z.boolean()]) }).strict().optional(),
  })
  .strict()
  .superRefine((candidate, ctx) => {
    const kinds = RULE_KINDS.filter((kind) => candidate[kind] !== undefined);
    if (kinds.length !== 1) ctx.addIssue({ code: 'custom', message: `must be exactly one of ${RULE_KINDS.join(', ')}` });
  })
  .transform((candidate) => candidate as PolicyRule);

export const policySchema = z
  .object({
    allow: z.array(rule).default([]),
    deny: z.array(rule).default([]),
  })
  .strict()
  .refine((policy) => policy.allow.length > 0, { message: 'must allow someone (an empty allow list denies everybody)', path: ['allow'] });

export type Policy = z.output<typeof policySchema>;

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

function matches(candidate: PolicyRule, subject: PolicySubject): boolean {
  if ('anyUser' in candidate) return true;
  // subject.email is canonical (accounts/email.ts) and so are the listed values: compared as they are,
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
