import { z } from 'zod';
import { emailDomainSchema, emailSchema } from './email.js';

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
    // The one email normaliser (config/email.ts): a listed value is written exactly as a person's
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
