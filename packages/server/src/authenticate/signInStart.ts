import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import { redirectToProvider } from './authorizationRequest.js';
import { validateReturnTo } from './returnTo.js';

interface StartRequest {
  Params: { providerId: string };
  Querystring: { rd?: string };
}

/** `GET /.gatehouse/sign-in/<provider>?rd=`: starts a sign-in with that provider. */
export function signInStart(services: Services) {
  return async function handler(request: FastifyRequest<StartRequest>, reply: FastifyReply) {
    const provider = services.providers.get(request.params.providerId);
    if (!provider) throw new AppError('not_found');
    const returnTo = validateReturnTo(request.query.rd, { portalOrigin: services.portalOrigin, appOrigins: services.apps.origins() });
    return redirectToProvider(services, request, reply, { provider, returnTo, purpose: 'sign-in' });
  };
}
