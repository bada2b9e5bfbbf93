import { z } from 'zod';
import { defineRoute } from '../route.js';
import { instant, providerRefSchema } from './common.js';

/** The server's verdict on a sign-in page's `rd` (Threat: open redirect — one rule, on the server). */
export const returnToSchema = z.object({
  /** A path on the portal, or a URL on a configured app's origin; the default when `rd` was refused. */
  href: z.string(),
  /** The app's host when `href` is on an app (to name it), for a signed-in caller only; else null. */
  host: z.string().nullable(),
  /**
   * The app's name when `href` is on an app, for a signed-in caller only (the page is public, and `rd`
   * whatever a stranger puts there: app names are not told to strangers); else null.
   */
  appName: z.string().nullable(),
});
export type ReturnTo = z.output<typeof returnToSchema>;

/**
 * Whether a provider's IdP answers right now (an active check of a few seconds' age, not the discovery
 * made at start): an `unavailable` one is shown but cannot be chosen.
 */
export const providerAvailabilities = ['available', 'unavailable'] as const;
export type ProviderAvailability = (typeof providerAvailabilities)[number];

export const signInProviderSchema = z.object({
  id: z.string(),
  name: z.string(),
  availability: z.enum(providerAvailabilities),
  /** The server path that starts a sign-in (`/.gatehouse/sign-in/<id>`); reached by navigation with `?rd=`. */
  startUrl: z.string(),
});
export type SignInProvider = z.output<typeof signInProviderSchema>;

/**
 * `GET /api/providers?rd=`: the organisation, every enabled provider, and where a sign-in would return
 * to (with the app's host and name only when the caller is signed in).
 */
export const getProviders = defineRoute({
  method: 'GET',
  path: '/api/providers',
  access: 'public',
  tag: 'session',
  summary: 'The organisation, the providers people can sign in with, and where a sign-in would return to',
  query: z.object({ rd: z.string().optional().meta({ description: 'The return-to the sign-in page was given (a path or an app URL)' }) }),
  responses: {
    200: z.object({ organization: z.object({ name: z.string() }), providers: z.array(signInProviderSchema), returnTo: returnToSchema }),
  },
});
export type ProvidersResponse = z.output<(typeof getProviders.responses)[200]>;

export const sessionUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  picture: z.string().nullable().optional(),
  /** The groups that count (what policies and apps see), not every group the IdP asserted. */
  groups: z.array(z.string()),
  /** Effective admin (from the config file or granted in the console). */
  admin: z.boolean(),
});
export type User = z.output<typeof sessionUserSchema>;

export const sessionInfoSchema = z.object({
  /** The session's public handle, never the cookie value. */
  id: z.string(),
  createdAt: instant,
  expiresAt: instant,
  provider: providerRefSchema,
});
export type SessionInfo = z.output<typeof sessionInfoSchema>;

/** `GET /api/session`: who is signed in (401 when nobody is). */
export const getSession = defineRoute({
  method: 'GET',
  path: '/api/session',
  access: 'session',
  tag: 'session',
  summary: 'Who is signed in (401 when nobody is)',
  responses: { 200: z.object({ user: sessionUserSchema, session: sessionInfoSchema }) },
});
export type CurrentSession = z.output<(typeof getSession.responses)[200]>;

/** `GET /api/csrf`: the token for `X-CSRF-Token` and the `csrf_token` form field. */
export const getCsrfToken = defineRoute({
  method: 'GET',
  path: '/api/csrf',
  access: 'session',
  tag: 'session',
  summary: 'The CSRF token for this session, for X-CSRF-Token or the csrf_token form field',
  responses: { 200: z.object({ csrfToken: z.string() }) },
});

/** `GET /api/apps`: the launcher's list, each app's policy evaluated for this person now. */
export const getApps = defineRoute({
  method: 'GET',
  path: '/api/apps',
  access: 'session',
  tag: 'account',
  summary: 'The apps you may open',
  responses: { 200: z.object({ apps: z.array(z.object({ id: z.string(), name: z.string(), url: z.string() })) }) },
});
export type LauncherApp = z.output<(typeof getApps.responses)[200]>['apps'][number];
