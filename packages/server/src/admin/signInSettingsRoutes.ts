import { routes } from '@gatehouse/contract';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { contractRoute, typed } from '../http/contract.js';
import { type AdminContext } from './context.js';

/**
 * "Who may sign in" for the whole organisation: email domains and whether unknown people get a user,
 * applied on top of each provider's own rules (both must admit a person; these only narrow). A change
 * ends the live sessions that no longer pass (sessions/admissionReview.ts).
 */
export async function signInSettingsRoutes(instance: FastifyInstance, { admin }: { admin: Pick<AdminContext, 'audit' | 'signInSettings' | 'actorOf' | 'reviewAdmission'> }) {
  const app = typed(instance);
  const { audit, signInSettings } = admin;

  app.route({
    ...contractRoute(routes.admin.getSignInSettings),
    handler: async () => {
      const { allowedDomains, createUsers } = await signInSettings.get();
      return { allowedDomains, createUsers };
    },
  });

  app.route({
    ...contractRoute(routes.admin.updateSignInSettings),
    handler: async (request) => {
      const actor = await admin.actorOf(request);
      const wanted = signInSettings.validate(request.body);
      // Checked before anything changes: an admin must not shut themselves out.
      const ownDomain = actor.user.email.slice(actor.user.email.lastIndexOf('@') + 1).toLowerCase();
      if (wanted.allowedDomains.length > 0 && !wanted.allowedDomains.includes(ownDomain)) {
        throw new AppError('self_lockout', { params: { reason: `your own domain, ${ownDomain}, is not in the list` } });
      }
      const { before, after } = await signInSettings.update(wanted);
      // Narrower rules count for everyone signed in now, not from their next sign-in on.
      const sessionsEnded = await admin.reviewAdmission('all', { by: 'console', actorUserId: actor.user.id, request });
      await audit.record({ type: 'sign_in_settings_updated', actorUserId: actor.user.id, sessionId: actor.session.id, request, details: { before, after, sessionsEnded } });
      return after;
    },
  });
}
