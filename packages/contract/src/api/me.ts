import { z } from 'zod';
import { defineRoute } from '../route.js';
import { deviceSchema, identityViewSchema, instant, nullableString, outcomes, providerRefSchema, requestText, sessionViewSchema } from './common.js';

const idParam = requestText(64).min(1);

/**
 * An app signed in with Gatehouse (an OpenID Connect client Gatehouse is the provider of) in one of your
 * sessions: one grant. Ending the session ends it too; "Sign out of <app>" ends it alone.
 */
export const myAppSignInSchema = z.object({
  /** The grant's id: what `revokeMyAppSignIn` names (not a token: it lets nobody in). */
  grantId: z.string(),
  app: z.object({ id: z.string(), name: z.string() }),
  /** When the app was signed in with Gatehouse in this session. */
  signedInAt: instant,
  /** When the app last used it (a code exchange, a refresh). */
  lastUsedAt: instant,
  /** The scopes granted (`openid`, `profile`, `email`, `groups`, `offline_access`): what the app may know of you. */
  scopes: z.array(z.string()),
});
export type MyAppSignIn = z.output<typeof myAppSignInSchema>;

/** One of your sessions; `current` is the one this request is made with; `apps`, those signed in with Gatehouse in it. */
export const mySessionSchema = sessionViewSchema.extend({ current: z.boolean(), apps: z.array(myAppSignInSchema) });
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

/**
 * `DELETE /api/me/grants/:grantId` (204): "Sign out of <app>": ends that app's sign-in with Gatehouse
 * (its tokens stop working; the app is told where it takes back-channel logout). 404 for a grant that is
 * not yours, exactly as for one that does not exist or has ended.
 */
export const revokeMyAppSignIn = defineRoute({
  method: 'DELETE',
  path: '/api/me/grants/:grantId',
  access: 'session',
  tag: 'account',
  summary: 'Sign out of an app you signed in to with Gatehouse',
  params: z.object({ grantId: idParam }),
  responses: { 204: null },
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
