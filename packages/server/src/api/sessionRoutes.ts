import type { FastifyInstance } from 'fastify';
import { adminStatus } from '../accounts/admins.js';
import { sessionGroups } from '../accounts/effectiveGroups.js';
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
      summary: 'The organisation and the providers people can sign in with',
      security: [],
      response: {
        200: {
          type: 'object',
          required: ['organization', 'providers'],
          properties: {
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
    handler: async () => ({
      organization: { name: config.organization.name },
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
