import { routes, signInRefusalReason, type ProviderTestResult } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { contractRoute, typed } from '../http/contract.js';
import { type AdminContext } from './context.js';

/**
 * The result of a test sign-in (started at POST /.gatehouse/test-sign-in/<provider>), read back from its
 * `provider_tested` audit event: the mapped profile and what the sign-in rules would decide, or the
 * error with its catalogue code.
 */
export async function providerTestRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'audit' | 'withPeople'> }) {
  const app = typed(instance);
  const { audit } = admin;

  app.route({
    ...contractRoute(routes.admin.getProviderTest),
    handler: async (request) => {
      const { providerId, testId } = request.params;
      const event = await audit.get(testId);
      if (!event || event.type !== 'provider_tested' || event.providerId !== providerId) throw new AppError('not_found');
      const [shown] = await admin.withPeople([event]);
      // Written by the test sign-in (authenticate/testSignIn.ts); the response schema checks it on the way out.
      const details = event.details as Partial<ProviderTestResult> & { provider?: { name?: unknown } };
      const provider = details.provider;
      return {
        id: event.id,
        time: shown!.time,
        provider: { id: providerId, name: typeof provider?.name === 'string' ? provider.name : providerId },
        actor: shown!.actor,
        result: details.result ?? 'failed',
        code: details.code ?? null,
        message: details.message ?? null,
        // A result recorded by an older version has no reason; an unknown one is not passed on.
        reason: signInRefusalReason.safeParse(details.reason).data ?? null,
        why: details.why ?? null,
        fix: details.fix ?? null,
        user: details.user ?? null,
        profile: details.profile ?? null,
      };
    },
  });
}
