import type { SignInRefusalReason } from '@gatehouse/contract';
import type { ProviderConfig } from '../../config/schema.js';
import { signInRefused, type AppError } from '../../errors.js';

/**
 * A provider rule said no (a preset's domain, tenant, ...): the person reads the sentence of the
 * reason (the catalogue's `sign_in_not_allowed`), and the reason and `why` go to the audit event, the
 * log line and the console's test sign-in, like any other sign-in rule's (accounts/signInRules.ts).
 * `why` names the value the rule saw; it is never shown to the person (it would tell a stranger how
 * the gate is set).
 */
export function refused(
  provider: Pick<ProviderConfig, 'name'>,
  reason: Extract<SignInRefusalReason, 'hosted_domain_not_allowed' | 'tenant_not_allowed' | 'claim_not_allowed'>,
  claims: Record<string, unknown>,
  why: string,
): AppError {
  const email = typeof claims.email === 'string' && claims.email.length <= 320 ? claims.email : undefined;
  return signInRefused(reason, `${provider.name}: ${why}`, { provider: provider.name, ...(email ? { email } : {}) });
}
