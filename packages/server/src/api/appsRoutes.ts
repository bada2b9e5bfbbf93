import { routes } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import { evaluatePolicy } from '../authorize/policy.js';
import { contractRoute, typed } from '../http/contract.js';
import { signedIn } from '../sessions/guard.js';
import type { ApiDeps } from './deps.js';

/** The launcher's list: the apps the signed-in person may open (each app's policy, evaluated now). */
export async function appsRoutes(instance: FastifyInstance, deps: Pick<ApiDeps, 'policySubjectOf' | 'apps'>) {
  typed(instance).route({
    ...contractRoute(routes.session.getApps),
    handler: async (request) => {
      const subject = deps.policySubjectOf(await signedIn(request));
      return {
        apps: deps.apps
          .all()
          .filter((candidate) => evaluatePolicy(candidate.policy, subject).allow)
          .map((candidate) => ({ id: candidate.id, name: candidate.name, url: `${new URL(candidate.publicUrl).origin}/` })),
      };
    },
  });
}
