import { pages } from '@gatehouse/contract';
import { AppError } from '../errors.js';
import type { RevokeReason } from './sessionStore.js';

/**
 * What a person is told when their portal cookie names a session Gatehouse ended on its own because it
 * no longer passes the rules of who may sign in (sessions/admissionReview.ts, the claims re-check):
 * `session_ended`, with why in their words, instead of a bare "not signed in". Sessions they ended
 * themselves, or an admin revoked, answer as any signed-out request does.
 */
const WHY: Partial<Record<RevokeReason, (provider: string) => string>> = {
  'admission-changed': () => 'the rules of who may sign in here changed, and your account no longer meets them',
  'claims-refused': (provider) => `${provider} now says something about your account that the rules of who may sign in here do not accept`,
  'claims-unconfirmed': (provider) => `${provider} could not confirm your account for too long`,
  'refresh-failed': (provider) => `${provider} no longer confirms your sign-in`,
};

export function sessionEndedError(ended: { reason: string | null; providerId: string }, providerName: (id: string) => string): AppError | undefined {
  const why = ended.reason ? WHY[ended.reason as RevokeReason] : undefined;
  if (!why) return undefined;
  return new AppError('session_ended', { params: { reason: why(providerName(ended.providerId)) }, retryUrl: pages.signIn.path, retryLabel: 'Sign in again' });
}
