import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { errors, type AdminContext } from './context.js';

const settingsSchema = {
  type: 'object',
  required: ['allowedDomains', 'createUsers'],
  properties: { allowedDomains: { type: 'array', items: { type: 'string' } }, createUsers: { type: 'boolean' } },
} as const;

/**
 * "Who may sign in" for the whole organisation: email domains and whether unknown people get a user,
 * applied on top of each provider's own rules (both must admit a person; these only narrow).
 */
export async function signInSettingsRoutes(app: FastifyInstance, { admin }: { admin: AdminContext }) {
  const { audit, signInSettings } = admin.services;

  app.get('/api/admin/sign-in-settings', {
    schema: { tags: ['admin'], summary: 'Who may sign in, for every provider at once', response: { 200: settingsSchema, ...errors } },
    handler: async () => {
      const { allowedDomains, createUsers } = await signInSettings.get();
      return { allowedDomains, createUsers };
    },
  });

  app.put('/api/admin/sign-in-settings', {
    schema: {
      tags: ['admin'],
      summary: 'Set who may sign in: allowed email domains (empty: any) and whether unknown people get a user',
      body: {
        type: 'object',
        required: ['allowedDomains', 'createUsers'],
        additionalProperties: false,
        properties: { allowedDomains: { type: 'array', maxItems: 200, items: { type: 'string', maxLength: 253 } }, createUsers: { type: 'boolean' } },
      },
      response: { 200: settingsSchema, ...errors },
    },
    handler: async (request) => {
      const actor = await admin.actorOf(request);
      const wanted = signInSettings.validate(request.body);
      // Checked before anything changes: an admin must not shut themselves out.
      const ownDomain = actor.user.email.slice(actor.user.email.lastIndexOf('@') + 1).toLowerCase();
      if (wanted.allowedDomains.length > 0 && !wanted.allowedDomains.includes(ownDomain)) {
        throw new AppError('self_lockout', { params: { reason: `your own domain, ${ownDomain}, is not in the list` } });
      }
      const { before, after } = await signInSettings.update(wanted);
      await audit.record({ type: 'sign_in_settings_updated', actorUserId: actor.user.id, sessionId: actor.session.id, request, details: { before, after } });
      return after;
    },
  });
}
