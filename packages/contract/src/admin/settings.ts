import { z } from 'zod';
import { defineRoute } from '../route.js';

/** "Who may sign in", for every provider at once: applied on top of each provider's own rules. */
export const signInSettingsSchema = z.object({
  /** Email domains that may sign in; empty: any. */
  allowedDomains: z.array(z.string()),
  /** Whether an unknown person who passes the rules gets a user. */
  createUsers: z.boolean(),
});
export type SignInSettings = z.output<typeof signInSettingsSchema>;

/** `GET /api/admin/sign-in-settings`. */
export const getSignInSettings = defineRoute({
  method: 'GET',
  path: '/api/admin/sign-in-settings',
  access: 'admin',
  tag: 'admin',
  summary: 'Who may sign in, for every provider at once',
  responses: { 200: signInSettingsSchema },
});

/** `PUT /api/admin/sign-in-settings`: 409 `self_lockout` when it would shut out the admin making it. */
export const updateSignInSettings = defineRoute({
  method: 'PUT',
  path: '/api/admin/sign-in-settings',
  access: 'admin',
  tag: 'admin',
  summary: 'Set who may sign in: allowed email domains (empty: any) and whether unknown people get a user',
  body: z.strictObject({ allowedDomains: z.array(z.string().max(253)).max(200), createUsers: z.boolean() }),
  responses: { 200: signInSettingsSchema },
});
