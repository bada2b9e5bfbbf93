import { pages } from '@gatehouse/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signedIn } from '../sessions/guard.js';
import { redirectToProvider, type RedirectDeps } from './authorizationRequest.js';
import { offeredProvider } from './signInStart.js';

interface LinkRequest {
  Params: { providerId: string };
}

/**
 * `POST /.gatehouse/link/<provider>` (CSRF-protected): the signed-in person proves they also own an
 * account at another provider. The attempt is bound to this browser *and* this session, so a link
 * cannot be completed into someone else's account.
 */
export function linkStart(deps: RedirectDeps) {
  return async function handler(request: FastifyRequest<LinkRequest>, reply: FastifyReply) {
    // Signed in, with the form's CSRF token: the route's guard (authenticate/index.ts).
    const current = await signedIn(request);
    const provider = offeredProvider(deps.providers, request.params.providerId, pages.account.path);
    return redirectToProvider(deps, request, reply, {
      provider,
      returnTo: `${pages.account.path}?linked=${encodeURIComponent(provider.id)}`,
      purpose: 'link',
      userId: current.user.id,
      sessionId: current.session.id,
    });
  };
}
