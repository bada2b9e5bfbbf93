import { endpoints, pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdentityProfile } from '../accounts/identityProfile.js';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { AuthenticateDeps } from './deps.js';
import type { AttemptMissing, SignInAttempt } from './signInAttempts.js';
import { cookieOptions } from '../sessions/cookies.js';
import type { NewSession } from '../sessions/sessionStore.js';
import type { VerifiedSignIn } from '../providers/kinds/index.js';
import { portalReturnToPolicy, validateReturnTo } from '../apps/returnTo.js';
import { completeTest } from './testSignIn.js';

/** Why a callback found no attempt, in words for the operator reading the log. */
const MISSING_ATTEMPT: Record<AttemptMissing | 'no_state' | 'other_provider', string> = {
  no_state: 'the callback carries no usable state parameter',
  unknown_state: 'no attempt has this state: it was already used, expired and purged, or never started here',
  expired: 'the attempt is older than signIn.attemptLifetime',
  no_binding_cookie:
    "the browser sent no sign-in cookie: the sign-in was started at another address than publicUrl (the cookie is the portal host's only), the browser blocks cookies, or the cookie expired",
  other_browser: 'the sign-in cookie is not the one the attempt was started with: it was started in another browser, or the link was passed on',
  other_provider: "the attempt was started with another provider: it is completed only at that provider's callback",
};

interface CallbackRequest {
  Params: { providerId: string };
  Querystring: Record<string, string | string[] | undefined>;
}

/**
 * The redirect URI. Order matters: the attempt (state) is consumed and checked against this browser and
 * this provider first; only then is anything sent to the IdP. openid-client validates the authorization
 * response (state, RFC 9207 iss), redeems the code with the PKCE verifier and checks the ID token
 * (signature, iss, aud, exp, nonce) and userinfo `sub`.
 */
/** What completing a sign-in, a link or a test sign-in takes: all of the area but its rate limit and logout tokens. */
export type CallbackDeps = Omit<AuthenticateDeps, 'sharedLimits' | 'nodeLimits' | 'logoutTokens'>;

export function callback(deps: CallbackDeps) {
  const { providers, attempts, accounts, sessions, audit, cookies, secureCookies, portalOrigin, running, signInSettings } = deps;

  return async function handler(request: FastifyRequest<CallbackRequest>, reply: FastifyReply) {
    const provider = providers.find(request.params.providerId);
    if (!provider) throw new AppError('not_found');
    if (!deps.metrics) return complete(request, reply, provider);
    // A sign-in (not a link or a test) is counted by how it ended: success, or its catalogue code.
    let purpose: SignInAttempt['purpose'] | undefined;
    try {
      const done = await complete(request, reply, provider, (attempt) => (purpose = attempt.purpose));
      if (purpose === 'sign-in') deps.metrics.signIn(provider.id, 'success');
      return done;
    } catch (error) {
      if (purpose === 'sign-in' || purpose === undefined) deps.metrics.signIn(provider.id, error instanceof AppError ? error.code : 'internal');
      throw error;
    }
  };

  async function complete(request: FastifyRequest<CallbackRequest>, reply: FastifyReply, provider: ProviderConfig, consumed?: (attempt: SignInAttempt) => void) {
    // A provider not published yet exists only for the console's test sign-in: every other use of its
    // callback is answered exactly as an unknown id's (404), never "Sign-in expired" (400), which would
    // tell a stranger probing ids that it exists (Threat: discovering a hidden provider).
    const hidden = providers.hidden(provider.id);
    const state = request.query.state;
    if (typeof state !== 'string' || state.length === 0 || state.length > 512) {
      missingAttempt(request, provider, 'no_state');
      throw hidden ? new AppError('not_found') : new AppError('sign_in_expired');
    }

    const taken = await attempts.take(state, request.cookies[cookies.signInBinding]);
    const attempt = 'attempt' in taken ? taken.attempt : undefined;
    // Mix-up defence (RFC 9700 §4.4): each provider has its own redirect URI, and an attempt started
    // with one provider can only be completed at that provider's callback.
    if (!attempt || attempt.provider_id !== provider.id) {
      missingAttempt(request, provider, 'missing' in taken ? taken.missing : 'other_provider');
      throw hidden ? new AppError('not_found') : new AppError('sign_in_expired', { retryUrl: '/sign-in' });
    }
    consumed?.(attempt);
    // An admin's test sign-in may try a provider that is turned off (it creates nothing); a sign-in or a
    // link started before the provider was turned off ends here.
    if (attempt.purpose === 'test') return finish(reply, await completeTest(deps, request, provider, attempt, () => verifiedProfile(request, provider, attempt)));
    if (hidden) throw new AppError('not_found');
    if (!provider.enabled) throw new AppError('provider_disabled', { params: { provider: provider.name }, retryUrl: pages.signIn.path });

    try {
      const profile = await verifiedProfile(request, provider, attempt);
      if (attempt.purpose === 'link') return await completeLink(request, reply, provider, attempt, profile);
      return await completeSignIn(request, reply, provider, attempt, profile);
    } catch (error) {
      const failure = error instanceof AppError ? error : new AppError('internal', { cause: error });
      await audit.record({
        type: attempt.purpose === 'link' ? 'identity_linked' : 'sign_in_failed',
        outcome: 'failure',
        // A refused suspended account's sign-in belongs in that user's audit trail.
        targetUserId: attempt.user_id ?? failure.refusal?.userId,
        providerId: provider.id,
        request,
        // A refusal carries the reason the rules (or the provider's own checks) computed, and the
        // sentence for admins; never the IdP's tokens or claims.
        details: { provider: { id: provider.id, name: provider.name }, code: failure.code, ...(failure.refusal ?? {}) },
      });
      throw failure;
    }
  }

  /**
   * A callback with no attempt to complete is answered "Sign-in expired" whatever the reason; the log
   * says which, with the Host it came to (the binding cookie is a host-only cookie of the portal's host).
   */
  function missingAttempt(request: FastifyRequest, provider: ProviderConfig, reason: AttemptMissing | 'no_state' | 'other_provider') {
    request.log.warn({ provider: provider.id, reason, host: request.headers.host, why: MISSING_ATTEMPT[reason] }, 'sign-in callback without its attempt');
  }

  /**
   * The provider's runtime (providers/kinds/) validates the authorization response, redeems the
   * code with the PKCE verifier and verifies the profile: for OpenID Connect, openid-client checks state,
   * RFC 9207 iss, the ID token (signature, iss, aud, exp, nonce) and userinfo `sub`, then the preset's quirks.
   */
  async function verifiedProfile(request: FastifyRequest, provider: ProviderConfig, attempt: SignInAttempt): Promise<VerifiedProfile> {
    const connection = await providers.connection(provider.id);
    // The response is read at our own redirect URI, never at whatever host or absolute-form URL the
    // request line claimed: only the query string comes from the request.
    const currentUrl = new URL(endpoints.callbackUrl(provider.id), portalOrigin);
    const queryStart = request.url.indexOf('?');
    if (queryStart !== -1) currentUrl.search = request.url.slice(queryStart);
    const verified = await connection.signIn(currentUrl, {
      expectedState: currentUrl.searchParams.get('state') ?? '',
      nonce: attempt.nonce,
      codeVerifier: attempt.code_verifier,
      clockSkewSeconds: running.current.signIn.clockSkew / 1000,
    });
    return { ...verified.profile, idToken: verified.idToken, refreshToken: verified.refreshToken, accessToken: keptAccessToken(deps, verified.accessToken, connection.recheck !== undefined) };
  }

  async function completeSignIn(request: FastifyRequest, reply: FastifyReply, provider: ProviderConfig, attempt: SignInAttempt, profile: VerifiedProfile) {
    const { user, identity } = await accounts.signIn(provider, profile, await signInSettings.get());
    // Rotation at sign-in (session fixation defence): whatever session this browser had ends now, and
    // the new session gets a new secret.
    const previous = await sessions.findActive(request.cookies[cookies.session]);
    if (previous) await sessions.revoke(previous.id, 'rotated');
    const { secret, session } = await sessions.create({
      userId: user.id,
      identityId: identity.id,
      providerId: provider.id,
      idpSid: profile.sid,
      idToken: profile.idToken,
      refreshToken: profile.refreshToken,
      accessToken: profile.accessToken,
      ip: request.ip,
      userAgent: request.headers['user-agent'],
    });
    await audit.record({
      type: 'sign_in',
      actorUserId: user.id,
      targetUserId: user.id,
      sessionId: session.id,
      providerId: provider.id,
      request,
      details: { provider: { id: provider.id, name: provider.name } },
    });
    request.log.info({ provider: provider.id, userId: user.id, sessionId: session.id }, 'signed in');
    reply.setCookie(cookies.session, secret, cookieOptions(secureCookies, Math.floor(running.current.session.absoluteLifetime / 1000)));
    return finish(reply, attempt.return_to);
  }

  async function completeLink(request: FastifyRequest, reply: FastifyReply, provider: ProviderConfig, attempt: SignInAttempt, profile: VerifiedProfile) {
    // The link must come back to the very session that started it (a link attempt cannot be finished
    // in another account's session, nor after that session ended).
    const current = await request.currentSession();
    if (!current || current.session.id !== attempt.session_id || current.user.id !== attempt.user_id) {
      throw new AppError('sign_in_expired', { retryUrl: pages.account.path });
    }
    const { identity } = await accounts.link(current.user.id, provider, profile, await signInSettings.get());
    await audit.record({
      type: 'identity_linked',
      actorUserId: current.user.id,
      targetUserId: current.user.id,
      sessionId: current.session.id,
      providerId: provider.id,
      request,
      details: { provider: { id: provider.id, name: provider.name }, identityId: identity.id },
    });
    request.log.info({ provider: provider.id, userId: current.user.id, identityId: identity.id }, 'identity linked');
    return finish(reply, attempt.return_to);
  }

  function finish(reply: FastifyReply, returnTo: string): FastifyReply {
    // Checked again on the way out, by the same rule as at the start: an attempt stored before a fix, or
    // for an app removed since, never becomes an open redirect (Threat: open redirect after sign-in).
    const target = validateReturnTo(returnTo, portalReturnToPolicy(deps));
    return reply
      .clearCookie(cookies.signInBinding, cookieOptions(secureCookies))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(target, 303);
  }
}

type VerifiedProfile = IdentityProfile & {
  idToken: string | undefined;
  refreshToken: string | undefined;
  accessToken: NewSession['accessToken'];
};

/**
 * The access token is kept only when an app is configured to receive it (passAccessToken), or when the
 * provider re-checks claims with it (`recheck`: GitHub's OAuth apps, which give no refresh token).
 */
export function keptAccessToken(deps: Pick<AuthenticateDeps, 'apps'>, token: VerifiedSignIn['accessToken'], rechecks = false): NewSession['accessToken'] {
  if (!deps.apps.passesAccessTokens && !rechecks) return undefined;
  return { value: token.value, expiresAt: token.expiresIn ? Date.now() + token.expiresIn * 1000 : undefined };
}
