import { pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { AuthenticateDeps } from './deps.js';
import { redirectToProvider } from './authorizationRequest.js';
import type { ProviderRegistry } from './providerRegistry.js';
import { portalReturnToPolicy, validateReturnTo } from '../authorize/returnTo.js';

interface StartRequest {
  Params: { providerId: string };
  Querystring: { rd?: string };
}

/** `GET /.gatehouse/sign-in/<provider>?rd=`: starts a sign-in with that provider. */
export function signInStart(deps: AuthenticateDeps) {
  return async function handler(request: FastifyRequest<StartRequest>, reply: FastifyReply) {
    const provider = offeredProvider(deps.providers, request.params.providerId, pages.signIn.path);
    const returnTo = validateReturnTo(request.query.rd, portalReturnToPolicy(deps));
    return redirectToProvider(deps, request, reply, { provider, returnTo, purpose: 'sign-in' });
  };
}

/**
 * A provider people may use right now. One turned off in the console answers `provider_disabled` from
 * the next request on (an old bookmark or an open sign-in page must not reach it); an unknown one, or
 * one not published yet, 404.
 */
export function offeredProvider(providers: ProviderRegistry, id: string, retryUrl: string): ProviderConfig {
  const provider = providers.find(id);
  if (!provider) throw new AppError('not_found');
  if (!provider.enabled) throw new AppError('provider_disabled', { params: { provider: provider.name }, retryUrl });
  // Not published yet (never tested): to everyone but the console, it does not exist.
  if (providers.hidden(id)) throw new AppError('not_found');
  return provider;
}
