import { z } from 'zod';
import { identityViewSchema, instant, nullableInstant, pageQuery, requestText, rowId, sessionViewSchema } from '../api/common.js';
import { defineRoute } from '../route.js';
import { auditEventSchema } from './audit.js';

export const userStatuses = ['active', 'suspended'] as const;
export type UserStatus = (typeof userStatuses)[number];

/** A user as the admin API shows them (the list and the detail page). */
export const adminUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  status: z.enum(userStatuses),
  /** Effective admin: from the config file, or granted in the console. */
  admin: z.boolean(),
  /** Admin through gatehouse.yaml: the console cannot remove it. */
  adminFromConfig: z.boolean(),
  createdAt: instant,
  lastSignInAt: nullableInstant,
  activeSessions: z.number().int(),
});
export type AdminUser = z.output<typeof adminUserSchema>;

/**
 * `GET /api/admin/users?query=&status=&page=&pageSize=`: searched and paged by the server. `query` is a
 * part of the email or the name, case-insensitive in ASCII (A-Z); other letters match as written.
 */
export const listUsers = defineRoute({
  method: 'GET',
  path: '/api/admin/users',
  access: 'admin',
  tag: 'admin',
  summary: 'Search and page through users',
  query: z.object({ query: requestText(200).optional(), status: z.enum(userStatuses).optional(), ...pageQuery }),
  responses: { 200: z.object({ users: z.array(adminUserSchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() }) },
});
export type UsersPage = z.output<(typeof listUsers.responses)[200]>;

export const userIdentitySchema = identityViewSchema;
export type UserIdentity = z.output<typeof userIdentitySchema>;

export const userSessionSchema = sessionViewSchema;
export type UserSession = z.output<typeof userSessionSchema>;

/** `GET /api/admin/users/:userId`: one user with identities, active sessions and audit trail. */
export const getUser = defineRoute({
  method: 'GET',
  path: '/api/admin/users/:userId',
  access: 'admin',
  tag: 'admin',
  summary: 'A user with identities, active sessions and audit trail',
  params: z.object({ userId: rowId }),
  responses: {
    200: z.object({ user: adminUserSchema, identities: z.array(userIdentitySchema), sessions: z.array(userSessionSchema), events: z.array(auditEventSchema) }),
  },
});
export type UserDetail = z.output<(typeof getUser.responses)[200]>;

const userParams = z.object({ userId: rowId });

/** `POST /api/admin/users/:userId/suspend` (204): every session of the user ends at once; 409 `last_admin` when no active admin would remain. */
export const suspendUser = defineRoute({
  method: 'POST',
  path: '/api/admin/users/:userId/suspend',
  access: 'admin',
  tag: 'admin',
  summary: 'Suspend a user (their sessions end now)',
  params: userParams,
  responses: { 204: null },
});

/** `POST /api/admin/users/:userId/reactivate` (204). */
export const reactivateUser = defineRoute({
  method: 'POST',
  path: '/api/admin/users/:userId/reactivate',
  access: 'admin',
  tag: 'admin',
  summary: 'Reactivate a suspended user',
  params: userParams,
  responses: { 204: null },
});

/** `PUT /api/admin/users/:userId/admin` `{ admin }` (204): grant or remove the admin role. */
export const setUserAdmin = defineRoute({
  method: 'PUT',
  path: '/api/admin/users/:userId/admin',
  access: 'admin',
  tag: 'admin',
  summary: 'Grant or remove the admin role',
  params: userParams,
  body: z.strictObject({ admin: z.boolean() }),
  responses: { 204: null },
});

/** `DELETE /api/admin/sessions/:sessionId` (204): revoke any session. */
export const revokeSession = defineRoute({
  method: 'DELETE',
  path: '/api/admin/sessions/:sessionId',
  access: 'admin',
  tag: 'admin',
  summary: 'Revoke any session',
  params: z.object({ sessionId: rowId }),
  responses: { 204: null },
});
