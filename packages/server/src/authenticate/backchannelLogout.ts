import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { ProviderConfig } from '../config/schema.js';
import type { AuthenticateDeps } from './deps.js';

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Logout tokens older than this are refused even when unexpired (§2.6 step 3 allows it). */
const MAX_TOKEN_AGE = '10m';
const CLOCK_TOLERANCE_SECONDS = 60;

/** Why a logout token was refused: reported to the IdP (never a stack trace) and logged. */
export class LogoutTokenError extends Error {}

interface BackchannelRequest {
  Params: { providerId: string };
  Body: { logout_token?: unknown } | undefined;
}

/**
 * OpenID Connect Back-Channel Logout 1.0: the IdP POSTs a signed `logout_token` when a person signs out
 * there, and the matching Gatehouse sessions end. Validation follows §2.6 step by step; sessions are
 * matched on (provider, sid) and/or (provider, sub), never on `sub` alone, since two IdPs may share
 * subject values. Not CSRF-protected: the signed token is the authentication.
 */
export function backchannelLogout(deps: Pick<AuthenticateDeps, 'providers' | 'sessions' | 'audit' | 'logoutTokens'>) {
  const { providers, sessions, audit, logoutTokens } = deps;
  const jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  async function validate(provider: ProviderConfig, logoutToken: string): Promise<JWTPayload & { sid?: string }> {
    const connection = await providers.connection(provider.id).catch((error: unknown) => {
      throw new LogoutTokenError('provider metadata unavailable', { cause: error });
    });
    const metadata = connection.backchannelLogout;
    if (!metadata) throw new LogoutTokenError('the provider publishes no JWKS');
    // Keyed by the JWKS URL, not the provider id: a console provider may be replaced by another IdP.
    let keys = jwks.get(metadata.jwksUri);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(metadata.jwksUri), { timeoutDuration: 5000 });
      jwks.set(metadata.jwksUri, keys);
    }
    // Step 2-3: signature with the IdP's published keys, an asymmetric algorithm it announces (never
    // "none", never an HMAC keyed by the client secret), iss, aud, iat and exp.
    const { algorithms } = metadata;
    let payload: JWTPayload;
    let typ: string | undefined;
    try {
      ({ payload, protectedHeader: { typ } } = await jwtVerify(logoutToken, keys, {
        issuer: metadata.issuer,
        audience: provider.clientId,
        algorithms,
        requiredClaims: ['iat', 'exp', 'jti'],
        maxTokenAge: MAX_TOKEN_AGE,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (error) {
      throw new LogoutTokenError(error instanceof joseErrors.JOSEError ? error.code : 'invalid token', { cause: error });
    }
    // §2.4: "logout+jwt" when typed (an ID token or access token must never pass as a logout token).
    if (typ !== undefined && typ.toLowerCase() !== 'logout+jwt' && typ.toLowerCase() !== 'application/logout+jwt') {
      throw new LogoutTokenError(`unexpected typ "${typ}"`);
    }
    // Step 4-6: sub and/or sid; the back-channel logout event; no nonce (so an ID token cannot be replayed as one).
    if (typeof payload.sub !== 'string' && typeof payload.sid !== 'string') throw new LogoutTokenError('neither sub nor sid');
    const events = payload.events as Record<string, unknown> | undefined;
    const event = events && typeof events === 'object' ? events[BACKCHANNEL_LOGOUT_EVENT] : undefined;
    if (!event || typeof event !== 'object' || Array.isArray(event)) throw new LogoutTokenError('no back-channel logout event');
    if ('nonce' in payload) throw new LogoutTokenError('a logout token must not contain a nonce');
    // No IdP identifier has a NUL character, and PostgreSQL's text refuses one (a 500 there): malformed.
    for (const claim of ['sub', 'sid', 'jti'] as const) {
      const value: unknown = payload[claim];
      if (typeof value === 'string' && value.includes('\u0000')) throw new LogoutTokenError(`a NUL character in ${claim}`);
    }
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new LogoutTokenError('bad jti');
    return payload as JWTPayload & { sid?: string };
  }

  /** Step 7 (optional in the spec, done here): a logout token works once, per provider. */
  async function rememberJti(provider: ProviderConfig, payload: JWTPayload): Promise<void> {
    const fresh = await logoutTokens.remember(provider.id, payload.jti!, (payload.exp! + CLOCK_TOLERANCE_SECONDS) * 1000);
    if (!fresh) throw new LogoutTokenError('logout token replayed (jti seen before)');
  }

  return async function handler(request: FastifyRequest<BackchannelRequest>, reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    const provider = providers.get(request.params.providerId);
    const logoutToken = request.body?.logout_token;
    try {
      if (!provider) throw new LogoutTokenError('unknown provider');
      if (typeof logoutToken !== 'string' || logoutToken.length === 0 || logoutToken.length > 16_384) {
        throw new LogoutTokenError('logout_token is missing');
      }
      const payload = await validate(provider, logoutToken);
      await rememberJti(provider, payload);
      const ended = await sessions.revokeByIdpSession(provider.id, { sid: payload.sid, sub: payload.sub });
      for (const userId of new Set(ended.map((session) => session.user_id))) {
        await audit.record({
          type: 'backchannel_logout',
          targetUserId: userId,
          providerId: provider.id,
          request,
          details: { provider: { id: provider.id, name: provider.name }, sessions: ended.filter((session) => session.user_id === userId).length },
        });
      }
      request.log.info({ provider: provider.id, sessions: ended.length }, 'back-channel logout');
      return reply.status(200).send();
    } catch (error) {
      if (!(error instanceof LogoutTokenError)) throw error;
      request.log.warn({ provider: request.params.providerId, reason: error.message, err: error.cause }, 'logout token refused');
      // §2.8: 400 for a logout request that could not be processed; OAuth-style error body.
      return reply.status(400).type('application/json').send({ error: 'invalid_request', error_description: error.message });
    }
  };
}
