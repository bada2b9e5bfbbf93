import { pages, type SignInRefusalReason } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignInPreview } from '../accounts/accountStore.js';
import type { IdentityProfile } from '../accounts/identityProfile.js';
import { refusalError } from '../accounts/signInRules.js';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { AuthenticateDeps } from './deps.js';
import { signedIn } from '../sessions/guard.js';
import type { CurrentSession } from '../sessions/sessionResolver.js';
import { redirectToProvider, type RedirectDeps } from './authorizationRequest.js';
import type { SignInAttempt } from './signInAttempts.js';

interface TestRequest {
  Params: { providerId: string };
}

/** At most this many groups are kept in a test's record (the count says how many there were). */
const MAX_GROUPS_SHOWN = 50;

/**
 * What a test sign-in found, kept as the `provider_tested` audit event's details (the console's result
 * page reads it back): the mapped profile and what the sign-in rules would decide, or the failure with
 * its catalogue code. Never a token.
 */
export type TestDetails =
  | {
      result: 'create' | 'existing' | 'link' | 'refused';
      /** For `refused`: the catalogue code people would get, its sentence, the reason and which rule said no. */
      code?: string;
      reason?: SignInRefusalReason;
      message?: string;
      why?: string;
      /** For `existing` and `link`: the user the person would be signed in as. */
      user?: { id: string; email: string; name: string } | undefined;
      profile: { subject: string; email: string | null; emailVerified: boolean; name: string | null; groups: string[]; groupCount: number };
    }
  | {
      result: 'failed';
      code: string;
      message: string;
      reason?: SignInRefusalReason;
      why?: string;
      /** For a configuration error (`provider_misconfigured`): what to change, for admins. */
      fix?: string;
    };

/**
 * `POST /.gatehouse/test-sign-in/<provider>` (admins, CSRF): an authorization code flow with the
 * provider — even one turned off — as a sign-in would run it (PKCE S256, state, nonce, bound to this
 * browser and this admin session), whose callback creates nothing: no user, no identity, no session.
 * It ends on the console's result page. A provider that cannot be reached ends there at once.
 */
export function testSignInStart(deps: RedirectDeps & Pick<AuthenticateDeps, 'audit'>) {
  return async function handler(request: FastifyRequest<TestRequest>, reply: FastifyReply) {
    // Signed in as an admin, with the form's CSRF token: the route's guard (authenticate/index.ts).
    const current = await signedIn(request);
    const page = pages.adminProvider.href(request.params.providerId);
    const provider = deps.providers.find(request.params.providerId);
    if (!provider) throw new AppError('not_found');
    try {
      return await redirectToProvider(deps, request, reply, { provider, returnTo: page, purpose: 'test', userId: current.user.id, sessionId: current.session.id });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      request.log.info({ provider: provider.id, code: error.code, ...(error.fix ? { fix: error.fix } : {}), err: error.cause ?? error }, 'test sign-in failed');
      const testId = await recordTest(deps, request, current, provider, { result: 'failed', code: error.code, message: error.message, ...(error.fix ? { fix: error.fix } : {}) });
      return reply.header('cache-control', 'no-store').redirect(pages.adminProviderTest.href(provider.id, testId), 303);
    }
  };
}

/**
 * The callback of a test sign-in: the IdP's answer is verified exactly as for a sign-in (`verify`), then
 * the sign-in rules are asked what they would do, changing nothing. The attempt must come back to the
 * admin session that started it, still an admin. Returns where the browser goes: the result page.
 */
export async function completeTest(
  deps: Pick<AuthenticateDeps, 'isAdmin' | 'accounts' | 'signInSettings' | 'publishTested' | 'audit'>,
  request: FastifyRequest,
  provider: ProviderConfig,
  attempt: SignInAttempt,
  verify: () => Promise<IdentityProfile>,
): Promise<string> {
  const current = await request.currentSession();
  if (!current || current.session.id !== attempt.session_id || current.user.id !== attempt.user_id || !deps.isAdmin(current)) {
    throw new AppError('sign_in_expired', { retryUrl: pages.adminProvider.href(provider.id) });
  }
  let details: TestDetails;
  try {
    const profile = await verify();
    const preview = await deps.accounts.previewSignIn(provider, profile, await deps.signInSettings.get());
    details = { ...decisionDetails(preview), profile: profileDetails(profile) };
  } catch (error) {
    const failure = error instanceof AppError ? error : new AppError('internal', { cause: error });
    request.log.info({ provider: provider.id, code: failure.code, ...(failure.fix ? { fix: failure.fix } : {}), err: failure.cause ?? failure }, 'test sign-in failed');
    // A provider's own claim check refuses like a rule does: its reason is kept; a configuration error, its fix.
    details = { result: 'failed', code: failure.code, message: failure.message, ...(failure.refusal ?? {}), ...(failure.fix ? { fix: failure.fix } : {}) };
  }
  const testId = await recordTest(deps, request, current, provider, details);
  request.log.info({ provider: provider.id, result: details.result, testId }, 'test sign-in');
  // The IdP signed someone in end to end (a refusal by the sign-in rules included: that is about the
  // person, not the provider): a provider not published yet is offered from now on.
  if (details.result !== 'failed' && (await deps.publishTested?.(provider.id))) {
    await deps.audit.record({
      type: 'provider_published',
      actorUserId: current.user.id,
      sessionId: current.session.id,
      providerId: provider.id,
      request,
      details: { provider: { id: provider.id, name: provider.name }, how: 'test', testId },
    });
  }
  return pages.adminProviderTest.href(provider.id, testId);
}

function decisionDetails(preview: SignInPreview): Omit<Extract<TestDetails, { profile: unknown }>, 'profile'> {
  switch (preview.kind) {
    case 'create':
      return { result: 'create' };
    case 'existing':
    case 'link':
      return { result: preview.kind, user: preview.user };
    case 'refused':
      return { result: 'refused', code: preview.code, reason: preview.reason, message: refusalError(preview).message, why: preview.why };
  }
}

function profileDetails(profile: IdentityProfile) {
  return {
    subject: profile.subject,
    email: profile.email ?? null,
    emailVerified: profile.emailVerified,
    name: profile.name ?? null,
    groups: profile.groups.slice(0, MAX_GROUPS_SHOWN),
    groupCount: profile.groups.length,
  };
}

function recordTest(deps: Pick<AuthenticateDeps, 'audit'>, request: FastifyRequest, current: CurrentSession, provider: ProviderConfig, details: TestDetails): Promise<string> {
  return deps.audit.record({
    type: 'provider_tested',
    outcome: details.result === 'failed' ? 'failure' : 'success',
    actorUserId: current.user.id,
    sessionId: current.session.id,
    providerId: provider.id,
    request,
    details: { provider: { id: provider.id, name: provider.name }, ...details },
  });
}


