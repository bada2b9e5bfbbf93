import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminStatus } from '../accounts/admins.js';
import { sessionGroups } from '../accounts/effectiveGroups.js';
import { portalReturnToPolicy, validateReturnTo } from '../authorize/returnTo.js';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';
import { csrfToken } from '../sessions/csrf.js';
import { SessionStore } from '../sessions/sessionStore.js';

const problem = { $ref: 'problem#' } as const;

/**
 * The front end's view of the world. Response schemas are allow-lists: fast-json-stringify drops any
 * property not listed, so a token or secret cannot leak through these routes by accident.
 */
export async function sessionRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { providers, config, secrets } = services;

  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.get(paths.api.providers, {
    schema: {
      tags: ['session'],
      summary: 'The organisation, the providers people can sign in with, and where a sign-in would return to',
      security: [],
      querystring: {
        type: 'object',
        properties: { rd: { type: 'string', description: 'The return-to the sign-in page was given (a path or an app URL)' } },
      },
      response: {
        200: {
          type: 'object',
          required: ['organization', 'providers', 'returnTo'],
          properties: {
            // The server's verdict on `rd`, by the one return-to rule (authenticate/returnTo.ts): the
            // sign-in page links only to this, never to what it was given (Threat: open redirect).
            returnTo: {
              type: 'object',
              required: ['href', 'host'],
              properties: {
                href: { type: 'string', description: 'A path on the portal, or a URL on a configured app origin; the default when rd was refused' },
                host: { type: ['string', 'null'], description: "The app's host when href is on an app, else null" },
              },
            },
            organization: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
            providers: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'name', 'startUrl'],
                properties: { id: { type: 'string' }, name: { type: 'string' }, startUrl: { type: 'string' } },
              },
            },
          },
        },
      },
    },
    handler: async (request: FastifyRequest<{ Querystring: { rd?: string } }>) => ({
      organization: { name: config.organization.name },
      returnTo: returnToVerdict(validateReturnTo(request.query.rd, portalReturnToPolicy(services))),
      providers: providers.enabled().map((provider) => ({ id: provider.id, name: provider.name, startUrl: paths.signInStart(provider.id) })),
    }),
  });

  app.get(paths.api.session, {
    schema: {
      tags: ['session'],
      summary: 'Who is signed in (401 when nobody is)',
      response: {
        200: {
          type: 'object',
          required: ['user', 'session'],
          properties: {
            user: {
              type: 'object',
              required: ['id', 'email', 'name', 'groups'],
              properties: {
                id: { type: 'string' },
                email: { type: 'string' },
                name: { type: 'string' },
                picture: { type: ['string', 'null'] },
                groups: { type: 'array', items: { type: 'string' } },
                admin: { type: 'boolean' },
              },
            },
            session: {
              type: 'object',
              required: ['id', 'createdAt', 'expiresAt', 'provider'],
              properties: {
                id: { type: 'string' },
                createdAt: { type: 'string', format: 'date-time' },
                expiresAt: { type: 'string', format: 'date-time' },
                provider: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
              },
            },
          },
        },
        401: problem,
      },
    },
    handler: async (request) => {
      const current = await request.currentSession();
      if (!current) throw new AppError('unauthenticated');
      const { user, session } = current;
      // The groups that count (what policies and apps see), not every group the IdP asserted.
      const groups = sessionGroups(providers, current);
      return {
        user: {
          id: user.id,
          email: user.email,
          name: user.name,
          picture: user.picture,
          groups: groups.counted,
          admin: adminStatus(config.admins, user, groups).admin,
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

  app.get(paths.api.csrf, {
    schema: {
      tags: ['session'],
      summary: 'The CSRF token for this session, for X-CSRF-Token or the csrf_token form field',
      response: {
        200: { type: 'object', required: ['csrfToken'], properties: { csrfToken: { type: 'string' } } },
        401: problem,
      },
    },
    handler: async (request) => {
      const current = await request.currentSession();
      if (!current) throw new AppError('unauthenticated');
      return { csrfToken: csrfToken(secrets.cookieKey, current.session) };
    },
  });
}

/** An accepted return-to and, when it is on an app rather than the portal, that app's host (to name it). */
function returnToVerdict(href: string): { href: string; host: string | null } {
  return { href, host: href.startsWith('/') ? null : new URL(href).host };
}
