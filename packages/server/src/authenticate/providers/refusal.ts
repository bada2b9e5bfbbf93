import type { ProviderConfig } from '../../config/schema.js';
import { AppError } from '../../errors.js';

/**
 * A provider rule said no (a preset's domain, tenant, ...): the person is told they may not sign in
 * here, like any other sign-in rule; `why` goes to the log and the console's test sign-in, never to
 * the person's page (it would tell a stranger how the gate is set).
 */
export function refused(provider: Pick<ProviderConfig, 'name'>, claims: Record<string, unknown>, why: string): AppError {
  const email = typeof claims.email === 'string' && claims.email.length <= 320 ? claims.email : undefined;
  return new AppError('sign_in_not_allowed', { params: email ? { email } : {}, cause: new Error(`${provider.name}: ${why}`) });
}
