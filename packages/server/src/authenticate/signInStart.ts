import { pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { AuthenticateDeps } from './deps.js';
import { redirectToProvider, type RedirectDeps } from './authorizationRequest.js';
import type { ProviderRegistry } from '../providers/providerRegistry.js';
import { portalReturnToPolicy, validateReturnTo } from '../apps/returnTo.js';
import { cookieOptions } from '../sessions/cookies.js';

interface StartRequest {
  Params: { providerId: string };
  Querystring: { rd?: string };
}

/** `GET /.gatehouse/sign-in/<provider>?rd=`: starts a sign-in with that provider. */
export function signInStart(deps: RedirectDeps & Pick<AuthenticateDeps, 'apps'>) {
  return async function handler(request: FastifyRequest<StartRequest>, reply: FastifyReply) {
    const provider = offeredProvider(deps.providers, request.params.providerId, pages.signIn.path);
    const returnTo = validateReturnTo(request.query.rd, portalReturnToPolicy(deps));
    // Set by "Switch account" (switchAccount below): this sign-in lets the person choose an account.
    const chooseAccount = request.cookies[deps.cookies.chooseAccount] !== undefined;
    return redirectToProvider(deps, request, reply, { provider, returnTo, purpose: 'sign-in', chooseAccount });
  };
}

/**
 * `GET /.gatehouse/switch-account?rd=` on the portal, where an app host's "Switch account" ends (its
 * POST has ended the session there): the next sign-in in this browser asks the IdP to let the person
 * choose an account, instead of the IdP signing them straight back in as the one who was refused. It
 * changes nothing else — no session is read or ended by a GET — so a link to it only ever costs a
 * person one account chooser. Then the sign-in page, back to `rd` (validated there and at the start).
 */
export function switchAccount(deps: Pick<AuthenticateDeps, 'portalOrigin' | 'apps' | 'cookies' | 'secureCookies' | 'running'>) {
  return async function handler(request: FastifyRequest<{ Querystring: { rd?: string } }>, reply: FastifyReply) {
    const returnTo = validateReturnTo(request.query.rd, portalReturnToPolicy(deps));
    return reply
      .header('cache-control', 'no-store')
      .setCookie(deps.cookies.chooseAccount, '1', cookieOptions(deps.secureCookies, Math.ceil(deps.running.current.signIn.attemptLifetime / 1000)))
      .redirect(pages.signIn.href(returnTo), 303);
  };
}

/**
 * A provider people may use right now. One turned off in the console answers `provider_disabled` from
 * the next request on (an old bookmark or an open sign-in page must not reach it); an unknown one, or
 * one not published yet, 404.
 */
export function offeredProvider(providers: ProviderRegistry, id: string, retryUrl: string): ProviderConfig {
  const provider = providers.find(id);
  // Not published yet (never tested): to everyone but the console, it does not exist, turned off or
  // not (Threat: a hidden provider discovered by its "turned off" answer, which names it).
  if (!provider || providers.hidden(id)) throw new AppError('not_found');
  if (!provider.enabled) throw new AppError('provider_disabled', { params: { provider: provider.name }, retryUrl });
  return provider;
}
