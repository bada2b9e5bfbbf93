import { endpoints } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { ProviderConfig } from '../config/schema.js';
import type { AuthenticateDeps } from './deps.js';
import { cookieOptions } from '../sessions/cookies.js';
import { isWellFormedSecret, newSecret } from '../sessions/sessionToken.js';
import type { SignInAttempt } from './signInAttempts.js';

export interface AuthorizationIntent {
  provider: ProviderConfig;
  returnTo: string;
  purpose: SignInAttempt['purpose'];
  /** For link and test attempts: the signed-in user and session that started it (and must finish it). */
  userId?: string;
  sessionId?: string;
  /** The person is switching account: the IdP is asked to let them choose (providers/types.ts). */
  chooseAccount?: boolean;
}

/**
 * Sends the browser to the IdP (OIDC Core §3.1; RFC 9700): a fresh state, nonce and PKCE S256 verifier
 * per attempt, recorded server-side and bound to this browser by an HttpOnly cookie, then a redirect to
 * the authorization endpoint — through a pushed authorization request (RFC 9126) where the IdP offers
 * one. Used by sign-in, by linking another provider, and by the console's test sign-in.
 */
/** What sending the browser to the IdP takes. */
export type RedirectDeps = Pick<AuthenticateDeps, 'providers' | 'attempts' | 'cookies' | 'secureCookies' | 'portalOrigin' | 'running'>;

export async function redirectToProvider(
  deps: RedirectDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  { provider, returnTo, purpose, userId, sessionId, chooseAccount }: AuthorizationIntent,
): Promise<FastifyReply> {
  const { providers, attempts, cookies, secureCookies, portalOrigin, running } = deps;
  const connection = await providers.connection(provider.id);

  // One binding secret per browser serves parallel attempts in several tabs.
  const existingBinding = request.cookies[cookies.signInBinding];
  const bindingSecret = isWellFormedSecret(existingBinding) ? existingBinding : newSecret();

  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();

  await attempts.create({ state, bindingSecret, providerId: provider.id, nonce, codeVerifier, returnTo, purpose, userId, sessionId });

  // The provider's runtime adds its parameters and chooses PAR (providers/kinds/).
  const authorizationUrl = await connection.authorizationUrl({
    redirectUri: `${portalOrigin}${endpoints.callbackUrl(provider.id)}`,
    state,
    nonce,
    codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
    chooseAccount,
  });

  // "Switch account" asks once: the sign-in after this one is a plain one again.
  if (chooseAccount) reply.clearCookie(cookies.chooseAccount, cookieOptions(secureCookies));
  return reply
    .setCookie(cookies.signInBinding, bindingSecret, cookieOptions(secureCookies, Math.ceil(running.current.signIn.attemptLifetime / 1000)))
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .redirect(authorizationUrl.href, 303);
}
