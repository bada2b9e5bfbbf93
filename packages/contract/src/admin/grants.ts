import { z } from 'zod';
import { deviceSchema, instant, nullableString, pageQuery, requestText, rowId } from '../api/common.js';
import { defineRoute } from '../route.js';

/**
 * The apps signed in with Gatehouse (Gatehouse as their OpenID Provider), as the console sees them: each
 * grant belongs to the person's Gatehouse session it was made in, and ending it ends the app's tokens
 * (and, where the app takes back-channel logout, signs the person out there).
 */
export const adminGrantSchema = z.object({
  /** The grant's id (not a token: it lets nobody in). */
  grantId: z.string(),
  app: z.object({ id: z.string(), name: z.string() }),
  /** The person, by email and name (empty when the user is gone). */
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
  /** The Gatehouse session it was made in, with what the server made of its browser. */
  session: z.object({ id: z.string(), device: deviceSchema, ip: nullableString }),
  /** When it was made, and when the app last used it (a code exchange, a refresh). */
  createdAt: instant,
  lastUsedAt: instant,
  expiresAt: instant,
  /** The scopes granted: what the app may know of the person. */
  scopes: z.array(z.string()),
});
export type AdminGrant = z.output<typeof adminGrantSchema>;

const appParams = z.object({ appId: requestText(64) });

/** `GET /api/admin/apps/:appId/grants?page=&pageSize=`: the app's live grants, most recently used first, paged. */
export const listAppGrants = defineRoute({
  method: 'GET',
  path: '/api/admin/apps/:appId/grants',
  access: 'admin',
  tag: 'admin',
  summary: 'Who is signed in to an app with Gatehouse: its live grants, paged',
  params: appParams,
  query: z.object(pageQuery),
  responses: { 200: z.object({ grants: z.array(adminGrantSchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() }) },
});
export type AppGrantsPage = z.output<(typeof listAppGrants.responses)[200]>;

/** `POST /api/admin/apps/:appId/grants/revoke-all`: "Sign everyone out of this app"; answers how many ended. */
export const revokeAppGrants = defineRoute({
  method: 'POST',
  path: '/api/admin/apps/:appId/grants/revoke-all',
  access: 'admin',
  tag: 'admin',
  summary: 'Sign everyone out of an app signed in with Gatehouse',
  params: appParams,
  responses: { 200: z.object({ revoked: z.number().int() }) },
});

/** `DELETE /api/admin/grants/:grantId` (204): end one grant; 404 when there is no live one with this id. */
export const revokeGrant = defineRoute({
  method: 'DELETE',
  path: '/api/admin/grants/:grantId',
  access: 'admin',
  tag: 'admin',
  summary: 'Sign a person out of one app signed in with Gatehouse',
  params: z.object({ grantId: rowId }),
  responses: { 204: null },
});

/** `GET /api/admin/users/:userId/grants`: the apps a user is signed in to with Gatehouse (live grants). */
export const listUserGrants = defineRoute({
  method: 'GET',
  path: '/api/admin/users/:userId/grants',
  access: 'admin',
  tag: 'admin',
  summary: 'The apps a user is signed in to with Gatehouse',
  params: z.object({ userId: rowId }),
  responses: { 200: z.object({ grants: z.array(adminGrantSchema) }) },
});
