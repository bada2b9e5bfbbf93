import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { errors, type AdminContext } from './context.js';

const nullableString = { type: ['string', 'null'] } as const;

/**
 * The result of a test sign-in (started at POST /.gatehouse/test-sign-in/<provider>), read back from its
 * `provider_tested` audit event: the mapped profile and what the sign-in rules would decide, or the
 * error with its catalogue code.
 */
export async function providerTestRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { audit } = admin.services;

  app.get('/api/admin/providers/:providerId/tests/:testId', {
    schema: {
      tags: ['admin'],
      summary: 'The outcome of a test sign-in: the profile the provider sent and what the sign-in rules would decide',
      params: {
        type: 'object',
        required: ['providerId', 'testId'],
        properties: { providerId: { type: 'string', maxLength: 64 }, testId: { type: 'string', maxLength: 64 } },
      },
      response: {
        200: {
          type: 'object',
          required: ['id', 'time', 'provider', 'actor', 'result'],
          properties: {
            id: { type: 'string' },
            time: { type: 'string', format: 'date-time' },
            provider: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
            actor: { type: ['object', 'null'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
            result: { type: 'string', enum: ['create', 'existing', 'link', 'refused', 'failed'] },
            code: nullableString,
            message: nullableString,
            why: nullableString,
            user: { type: ['object', 'null'], properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } } },
            profile: {
              type: ['object', 'null'],
              properties: {
                subject: { type: 'string' },
                email: nullableString,
                emailVerified: { type: 'boolean' },
                name: nullableString,
                groups: { type: 'array', items: { type: 'string' } },
                groupCount: { type: 'integer' },
              },
            },
          },
        },
        ...errors,
      },
    },
    handler: async (request) => {
      const { providerId, testId } = request.params as { providerId: string; testId: string };
      const event = await audit.get(testId);
      if (!event || event.type !== 'provider_tested' || event.providerId !== providerId) throw new AppError('not_found');
      const [shown] = await admin.withPeople([event]);
      const details = event.details;
      const provider = details.provider as { id?: unknown; name?: unknown } | undefined;
      return {
        id: event.id,
        time: shown!.time,
        provider: { id: providerId, name: typeof provider?.name === 'string' ? provider.name : providerId },
        actor: shown!.actor,
        result: details.result,
        code: details.code ?? null,
        message: details.message ?? null,
        why: details.why ?? null,
        user: details.user ?? null,
        profile: details.profile ?? null,
      };
    },
  });
}
