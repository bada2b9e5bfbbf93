import { endpoints, routes, type ReturnTo } from '@gatehouse/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validateReturnTo } from '../apps/returnTo.js';
import { AppError } from '../errors.js';
import { contractRoute, typed } from '../http/contract.js';
import { sendError } from '../http/errorHandler.js';
import { csrfToken } from '../sessions/csrf.js';
import { signedIn } from '../sessions/guard.js';
import { SessionStore } from '../sessions/sessionStore.js';
import type { ApiDeps } from './deps.js';

/** Who is signed in, the CSRF token, and what the sign-in page offers. */
export async function sessionRoutes(instance: FastifyInstance, deps: Pick<ApiDeps, 'providers' | 'returnToPolicy' | 'organizationName' | 'apps' | 'groupsOf' | 'isAdmin' | 'cookieKey'>) {
  const app = typed(instance);
  const { providers } = deps;

  app.route({
    ...contractRoute(routes.session.getProviders),
    handler: async (request) => {
      const offered = providers.enabled();
      // Each IdP's answer to a check at most a few seconds old: one that is down or frozen is shown as
      // unavailable right now instead of sending people to an error.
      const availability = await providers.availability(offered.map((provider) => provider.id));
      const href = validateReturnTo(request.query.rd, deps.returnToPolicy());
      return {
        organization: { name: deps.organizationName() },
        // The server's verdict on `rd`, by the one return-to rule: the sign-in page links only to this,
        // never to what it was given (Threat: open redirect). It names the app only to a signed-in person.
        returnTo: (await signedInNow(request)) ? returnToVerdict(href, deps.apps) : { href, host: null, appName: null },
        providers: offered.map((provider) => ({
          id: provider.id,
          name: provider.name,
          availability: availability.get(provider.id) ?? 'available',
          startUrl: endpoints.signInUrl(provider.id),
        })),
      };
    },
  });

  const sessionCheck = contractRoute(routes.session.getSession);
  app.route({
    ...sessionCheck,
    config: {
      ...sessionCheck.config,
      // The portal asks this on every page load to learn whether anyone is signed in: "nobody" is the
      // expected answer of every visitor, not an event for the log at info (still at debug). A session
      // Gatehouse ended itself is said, with why (the sign-in page shows it).
      whenSignedOut: async (request, reply, ended) => sendError((await ended()) ?? new AppError('unauthenticated', { expected: true }), request, reply),
    },
    handler: async (request) => {
      const current = await signedIn(request);
      const { user, session } = current;
      return {
        user: {
          id: user.id,
          email: user.email,
          name: user.name,
          picture: user.picture,
          // The groups that count (what policies and apps see), not every group the IdP asserted.
          groups: [...deps.groupsOf(current).counted],
          admin: deps.isAdmin(current),
        },
        session: {
          id: session.id,
          createdAt: new Date(session.created_at).toISOString(),
          expiresAt: new Date(SessionStore.expiresAt(session)).toISOString(),
          provider: { id: session.provider_id, name: providers.name(session.provider_id) },
        },
      };
    },
  });

  app.route({
    ...contractRoute(routes.session.getCsrfToken),
    handler: async (request) => ({ csrfToken: csrfToken(deps.cookieKey, (await signedIn(request)).session) }),
  });
}

/**
 * Whether a portal session comes with this request. Threat: app names disclosed to strangers. The page
 * this route serves is public, and `rd` is whatever the caller puts there: answering every caller with
 * the name of the app at any host it guesses made it a directory of the organisation's apps. A stranger
 * gets the verdict alone — what the sign-in page needs for its buttons; whether a host is an app is no
 * news to anyone who can reach Gatehouse, which answers every request by its Host — and a signed-in
 * person, who may see an app's name on the 403 page of any app whose host they open, gets the name too.
 * A session that cannot be read counts as none: the name is withheld, nothing else changes.
 */
async function signedInNow(request: FastifyRequest): Promise<boolean> {
  try {
    return (await request.currentSession()) !== undefined;
  } catch {
    return false;
  }
}

/** An accepted return-to and, when it is on an app rather than the portal, that app's host and name (to name it). */
function returnToVerdict(href: string, apps: ApiDeps['apps']): ReturnTo {
  if (href.startsWith('/')) return { href, host: null, appName: null };
  const { host } = new URL(href);
  return { href, host, appName: apps.forHost(host)?.name ?? null };
}
