import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { cookieOptions } from '../sessions/cookies.js';
import { isWellFormedSecret, newSecret } from '../sessions/sessionToken.js';
import { validateReturnTo } from './returnTo.js';

interface StartRequest {
  Params: { providerId: string };
  Querystring: { rd?: string };
}

/**
 * Starts the authorization code flow (OIDC Core §3.1; RFC 9700): a fresh state, nonce and PKCE S256
 * verifier per attempt, recorded server-side and bound to this browser by an HttpOnly cookie, then a
 * redirect to the IdP — through a pushed authorization request (RFC 9126) where the IdP offers one.
 */
export function signInStart(services: Services) {
  const { providers, attempts, cookies, secureCookies, portalOrigin, config } = services;

  return async function handler(request: FastifyRequest<StartRequest>, reply: FastifyReply) {
    const provider = providers.get(request.params.providerId);
    if (!provider) throw new AppError('not_found');
    const configuration = await providers.configuration(provider.id);

    const returnTo = validateReturnTo(request.query.rd, { portalOrigin });
    // One binding secret per browser serves parallel attempts in several tabs.
    const existingBinding = request.cookies[cookies.signInBinding];
    const bindingSecret = isWellFormedSecret(existingBinding) ? existingBinding : newSecret();

    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const parameters: Record<string, string> = {
      ...provider.authorizationParams,
      redirect_uri: `${portalOrigin}${paths.callback(provider.id)}`,
      scope: provider.scopes.join(' '),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    };

    await attempts.create({ state, bindingSecret, providerId: provider.id, nonce, codeVerifier, returnTo, purpose: 'sign-in' });

    const usePar =
      provider.pushedAuthorizationRequests === 'always' ||
      (provider.pushedAuthorizationRequests === 'auto' && Boolean(configuration.serverMetadata().pushed_authorization_request_endpoint));
    let authorizationUrl: URL;
    try {
      authorizationUrl = usePar
        ? await client.buildAuthorizationUrlWithPAR(configuration, parameters)
        : client.buildAuthorizationUrl(configuration, parameters);
    } catch (error) {
      throw new AppError('provider_unavailable', { params: { provider: provider.name }, cause: error });
    }

    reply
      .setCookie(cookies.signInBinding, bindingSecret, cookieOptions(secureCookies, Math.ceil(config.signIn.attemptLifetime / 1000)))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(authorizationUrl.href, 303);
  };
}
