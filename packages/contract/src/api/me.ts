import { z } from 'zod';
import { defineRoute } from '../route.js';
import { deviceSchema, identityViewSchema, instant, nullableString, outcomes, providerRefSchema, requestText, sessionViewSchema } from './common.js';

const idParam = requestText(64).min(1);

/** One of your sessions; `current` is the one this request is made with. */
export const mySessionSchema = sessionViewSchema.extend({ current: z.boolean() });
export type MySession = z.output<typeof mySessionSchema>;

/** `GET /api/me/sessions`: your active sessions, most recently used first. */
export const getMySessions = defineRoute({
  method: 'GET',
  path: '/api/me/sessions',
  access: 'session',
  tag: 'account',
  summary: 'Your active sessions, most recently used first',
  responses: { 200: z.object({ sessions: z.array(mySessionSchema) }) },
});

/** `DELETE /api/me/sessions/:sessionId`: revoke one of your other sessions (the current one ends by signing out). */
export const revokeMySession = defineRoute({
  method: 'DELETE',
  path: '/api/me/sessions/:sessionId',
  access: 'session',
  tag: 'account',
  summary: 'Revoke one of your other sessions',
  params: z.object({ sessionId: idParam }),
  responses: { 204: null },
});

/** `POST /api/me/sessions/revoke-others`: sign out everywhere else. */
export const revokeOtherSessions = defineRoute({
  method: 'POST',
  path: '/api/me/sessions/revoke-others',
  access: 'session',
  tag: 'account',
  summary: 'Sign out everywhere else: revoke every session but this one',
  responses: { 200: z.object({ revoked: z.number().int() }) },
});

export const myIdentitySchema = identityViewSchema.extend({
  /** The name the provider gives, if any. */
  name: nullableString,
  /** The identity this session signed in with. */
  current: z.boolean(),
  /** The identity whose email is the account's. */
  primary: z.boolean(),
});
export type MyIdentity = z.output<typeof myIdentitySchema>;

/** `GET /api/me/identities`: linked identities, and the providers that could still be linked. */
export const getMyIdentities = defineRoute({
  method: 'GET',
  path: '/api/me/identities',
  access: 'session',
  tag: 'account',
  summary: 'The identity providers linked to your account, and those you could link',
  responses: { 200: z.object({ identities: z.array(myIdentitySchema), linkable: z.array(providerRefSchema) }) },
});

/** `DELETE /api/me/identities/:identityId`: unlink one (never the last). */
export const unlinkMyIdentity = defineRoute({
  method: 'DELETE',
  path: '/api/me/identities/:identityId',
  access: 'session',
  tag: 'account',
  summary: 'Unlink an identity (never the last one)',
  params: z.object({ identityId: idParam }),
  responses: { 204: null },
});

/**
 * An event of your own account as you may see it: never the audit log's details, which are for admins
 * (the rule that denied you, with the emails it names; why a sign-in was refused, in the admins' words;
 * an administrator's address).
 */
export const activityEventSchema = z.object({
  id: z.string(),
  time: instant,
  /**
   * What happened, as the audit log names it (`auditEventTypes`): the types about a person's own account,
   * `sign_in` to `access_denied`, and the administrators' changes to it (`user_suspended`, `admin_granted`, …).
   */
  type: z.string(),
  outcome: z.enum(outcomes),
  /** The event in a sentence: "Signed in with Development IdP", "Denied access to Wiki". */
  summary: z.string(),
  /** A second sentence when there is more to say ("2 sessions ended."), else null. */
  detail: nullableString,
  /** The app it was about (access denied), by name. */
  app: z.object({ name: z.string() }).nullable(),
  /** The identity provider it was about. */
  provider: providerRefSchema.nullable(),
  /** Where it came from, only when it was your own doing (never an administrator's or an IdP's address). */
  ip: nullableString,
  device: deviceSchema.nullable(),
});
export type ActivityEvent = z.output<typeof activityEventSchema>;

/** `GET /api/me/activity?page=&pageSize=`: this account's events, newest first, a page at a time (10 by default). */
export const getMyActivity = defineRoute({
  method: 'GET',
  path: '/api/me/activity',
  access: 'session',
  tag: 'account',
  summary: 'Recent activity on your account, newest first, paged',
  query: z.object({
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(50).default(10),
  }),
  responses: { 200: z.object({ events: z.array(activityEventSchema), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() }) },
});
