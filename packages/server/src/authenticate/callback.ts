import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { mapClaims } from '../accounts/identityProfile.js';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { cookieOptions } from '../sessions/cookies.js';

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
export function callback(services: Services) {
  const { providers, attempts, accounts, sessions, cookies, secureCookies, portalOrigin, config } = services;

  return async function handler(request: FastifyRequest<CallbackRequest>, reply: FastifyReply) {
    const provider = providers.get(request.params.providerId);
    if (!provider) throw new AppError('not_found');
    const state = request.query.state;
    if (typeof state !== 'string' || state.length === 0 || state.length > 512) throw new AppError('sign_in_expired');

    const attempt = await attempts.consume(state, request.cookies[cookies.signInBinding]);
    // Mix-up defence (RFC 9700 §4.4): each provider has its own redirect URI, and an attempt started
    // with one provider can only be completed at that provider's callback.
    if (!attempt || attempt.provider_id !== provider.id) throw new AppError('sign_in_expired', { retryUrl: '/sign-in' });

    const configuration = await providers.configuration(provider.id);
    // The response is read at our own redirect URI, never at whatever host or absolute-form URL the
    // request line claimed: only the query string comes from the request.
    const currentUrl = new URL(paths.callback(provider.id), portalOrigin);
    const queryStart = request.url.indexOf('?');
    if (queryStart !== -1) currentUrl.search = request.url.slice(queryStart);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: attempt.code_verifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw fromOidcError(error, provider);
    }

    const idClaims = tokens.claims();
    if (!idClaims) throw new AppError('invalid_response', { params: { provider: provider.name } });
    // openid-client checks exp, nbf and "too far in the past", not an iat in the future: we do.
    const skewSeconds = config.signIn.clockSkew / 1000;
    if (typeof idClaims.iat !== 'number' || idClaims.iat > Date.now() / 1000 + skewSeconds) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: new Error('ID token issued in the future') });
    }

    let userinfo: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        userinfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
      } catch (error) {
        throw fromOidcError(error, provider);
      }
    }

    let profile;
    try {
      profile = mapClaims(provider, idClaims, userinfo);
    } catch (error) {
      throw new AppError('invalid_response', { params: { provider: provider.name }, cause: error });
    }
    const { user, identity } = await accounts.signIn(provider, profile);

    // Rotation at sign-in (session fixation defence): whatever session this browser had ends now, and
    // the new session gets a new secret.
    const previous = await sessions.findActive(request.cookies[cookies.session]);
    if (previous) await sessions.revoke(previous.id, 'rotated');
    const { secret, session } = await sessions.create({
      userId: user.id,
      identityId: identity.id,
      providerId: provider.id,
      idpSid: profile.sid,
      idToken: tokens.id_token,
      refreshToken: tokens.refresh_token,
      ip: request.ip,
      userAgent: request.headers['user-agent'],
    });
    request.log.info({ provider: provider.id, userId: user.id, sessionId: session.id }, 'signed in');

    reply
      .setCookie(cookies.session, secret, cookieOptions(secureCookies, Math.floor(config.session.absoluteLifetime / 1000)))
      .clearCookie(cookies.signInBinding, cookieOptions(secureCookies))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(attempt.return_to, 303);
  };
}

/** Maps openid-client's failures to the catalogue: IdP said no, IdP unreachable, or answer not trusted. */
export function fromOidcError(error: unknown, provider: Pick<ProviderConfig, 'name'>): AppError {
  const params = { provider: provider.name };
  if (error instanceof AppError) return error;
  if (error instanceof client.AuthorizationResponseError) {
    // The IdP's own words (error_description) are shown, bounded and as text only (escaped on render).
    const reason = (error.error_description || error.error).replace(/[^\x20-\x7e]/g, '').slice(0, 200);
    return new AppError('sign_in_denied', { params: { ...params, reason }, cause: error });
  }
  if (isNetworkError(error)) return new AppError('provider_unavailable', { params, cause: error });
  return new AppError('invalid_response', { params, cause: error });
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return true;
  // fetch() rejects with TypeError("fetch failed") and the socket error as its cause.
  if (error instanceof TypeError && error.message === 'fetch failed') return true;
  return error.cause instanceof Error && error.cause !== error && isNetworkError(error.cause);
}
