import type { FastifyInstance } from 'fastify';
import { policySubject } from '../accounts/admins.js';
import { sessionGroups } from '../accounts/effectiveGroups.js';
import { evaluatePolicy } from '../authorize/policy.js';
import { AppError } from '../errors.js';
import { paths } from '../paths.js';
import type { Services } from '../services.js';

/** The launcher's list: the apps the signed-in person may open (each app's policy, evaluated now). */
export async function appsRoutes(app: FastifyInstance, { services }: { services: Services }) {
  app.get(paths.api.apps, {
    schema: {
      tags: ['account'],
      summary: 'The apps you may open',
      response: {
        200: {
          type: 'object',
          required: ['apps'],
          properties: {
            apps: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'name', 'url'],
                properties: { id: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' } },
              },
            },
          },
        },
        401: { $ref: 'problem#' },
      },
    },
    handler: async (request, reply) => {
      const current = await request.currentSession();
      if (!current) throw new AppError('unauthenticated');
      reply.header('cache-control', 'no-store');
      const subject = policySubject(services.config.admins, current.user, sessionGroups(services.providers, current), current.claims.extra);
      return {
        apps: services.apps
          .all()
          .filter((candidate) => evaluatePolicy(candidate.policy, subject).allow)
          .map((candidate) => ({ id: candidate.id, name: candidate.name, url: `${new URL(candidate.publicUrl).origin}/` })),
      };
    },
  });
}
