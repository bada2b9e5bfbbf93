import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { isValidCsrf } from '../sessions/csrf.js';
import { redirectToProvider } from './authorizationRequest.js';
import { offeredProvider } from './signInStart.js';

interface LinkRequest {
  Params: { providerId: string };
}

/**
 * `POST /.gatehouse/link/<provider>` (CSRF-protected): the signed-in person proves they also own an
 * account at another provider. The attempt is bound to this browser *and* this session, so a link
 * cannot be completed into someone else's account.
 */
export function linkStart(services: Services) {
  return async function handler(request: FastifyRequest<LinkRequest>, reply: FastifyReply) {
    const current = await request.currentSession();
    if (!current) return reply.redirect(`${paths.pages.signIn}?rd=${encodeURIComponent(paths.pages.account)}`, 303);
    if (!isValidCsrf(request, services.portalOrigin, services.secrets.cookieKey, current.session)) throw new AppError('csrf_failed');
    const provider = offeredProvider(services.providers, request.params.providerId, paths.pages.account);
    return redirectToProvider(services, request, reply, {
      provider,
      returnTo: `${paths.pages.account}?linked=${encodeURIComponent(provider.id)}`,
      purpose: 'link',
      userId: current.user.id,
      sessionId: current.session.id,
    });
  };
}
