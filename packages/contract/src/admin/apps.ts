import { z } from 'zod';
import { ID_TOKEN_ALGORITHMS, OIDC_CLIENT_AUTHENTICATIONS, OIDC_SCOPES } from '../definitions/oidcClient.js';
import { policyRuleViewSchema, policySchema, policyViewSchema } from '../definitions/policy.js';
import { requestText } from '../api/common.js';
import { defineRoute } from '../route.js';

/** `config`: from gatehouse.yaml, read-only in the console; `console`: created there. */
export const sources = ['config', 'console'] as const;
export type Source = (typeof sources)[number];

/**
 * An app's `oidc` block as the console shows it: everything but the config file's `secrets`, which
 * nothing answers with (nor their hashes): a response schema keeps only the keys it names.
 */
export const adminOidcClientSchema = z.object({
  /** The `client_id`, defaults applied (the app's id when the block names none). */
  clientId: z.string(),
  authentication: z.enum(OIDC_CLIENT_AUTHENTICATIONS),
  jwksUri: z.string().optional(),
  /** The client's public keys (a private key is refused when the app is saved). */
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  backchannelLogoutUri: z.string().optional(),
  scopes: z.array(z.enum(OIDC_SCOPES)),
  thirdParty: z.boolean(),
  subject: z.enum(['public', 'pairwise']),
  idTokenAlgorithm: z.enum(ID_TOKEN_ALGORITHMS),
  claimsInIdToken: z.boolean(),
  accessTokenLifetime: z.number(),
  idTokenLifetime: z.number(),
  refreshTokenLifetime: z.number(),
  /** Whether the client's secrets are the configuration file's (a config app), which the console cannot change. */
  secretsFromConfig: z.boolean(),
});
export type AdminOidcClient = z.output<typeof adminOidcClientSchema>;

/** An app as the console lists it: its definition (defaults applied) and where it comes from. */
export const adminAppSchema = z.object({
  id: z.string(),
  name: z.string(),
  publicUrl: z.string(),
  /** Absent for an app its own proxy serves (forward-auth only). */
  upstream: z.string().optional(),
  policy: policyViewSchema,
  publicPaths: z.array(z.string()),
  websockets: z.boolean(),
  corsPreflight: z.boolean(),
  preserveHost: z.boolean(),
  /** The providers whose access token the app receives (none: no token). */
  passAccessToken: z.array(z.string()),
  compress: z.boolean(),
  /** Whether Gatehouse guards the app's host (false: the app signs people in with OpenID Connect alone). */
  guard: z.boolean(),
  /** Present for an app that signs people in with OpenID Connect, Gatehouse being its provider. */
  oidc: adminOidcClientSchema.optional(),
  source: z.enum(sources),
});
export type AdminApp = z.output<typeof adminAppSchema>;

const appParams = z.object({ appId: requestText(64) });

/**
 * `GET /api/admin/forward-auth`: what a proxy in front of Gatehouse (nginx, Caddy, Traefik) needs from
 * it, for the console to fill in each app's proxy configuration: where this Gatehouse listens, and the
 * proxies whose X-Forwarded-* headers it believes (`trustedProxies`; set in the file, with a restart).
 */
export const getForwardAuthSetup = defineRoute({
  method: 'GET',
  path: '/api/admin/forward-auth',
  access: 'admin',
  tag: 'admin',
  summary: 'Where a proxy in front reaches Gatehouse, and which proxies Gatehouse believes',
  responses: {
    200: z.object({
      /** `host:port` a proxy on this machine reaches Gatehouse at (the listen address; loopback for a wildcard). */
      gatehouseAddress: z.string(),
      /** The proxies whose X-Forwarded-* headers are believed; empty: every forward-auth check is refused. */
      trustedProxies: z.array(z.string()),
      /** Whether that list is development mode's default (loopback), not the file's own. */
      trustedProxiesDefault: z.boolean(),
      mode: z.enum(['development', 'production']),
    }),
  },
});
export type ForwardAuthSetup = z.output<(typeof getForwardAuthSetup.responses)[200]>;

/** `GET /api/admin/apps`: every protected app with its policy; config apps are read-only. */
export const listApps = defineRoute({
  method: 'GET',
  path: '/api/admin/apps',
  access: 'admin',
  tag: 'admin',
  summary: 'Every protected app with its policy; config apps are read-only',
  responses: { 200: z.object({ apps: z.array(adminAppSchema) }) },
});

/**
 * `POST /api/admin/apps` (201): validated like an `apps:` entry in gatehouse.yaml; 400 names each bad
 * field; 409 `conflict` when another app has the id or the public URL's host (the problem's `field` says which).
 */
export const createApp = defineRoute({
  method: 'POST',
  path: '/api/admin/apps',
  access: 'admin',
  tag: 'admin',
  summary: 'Create an app (validated like an apps: entry in gatehouse.yaml)',
  body: z.record(z.string(), z.unknown()).meta({ description: 'An app definition, as an apps: entry in gatehouse.yaml' }),
  responses: { 201: adminAppSchema },
});

/** `PUT /api/admin/apps/:appId`: replace a console app; 409 `app_from_config` for config apps, `conflict` for a host another app uses. */
export const updateApp = defineRoute({
  method: 'PUT',
  path: '/api/admin/apps/:appId',
  access: 'admin',
  tag: 'admin',
  summary: 'Replace an app created in the console',
  params: appParams,
  body: z.record(z.string(), z.unknown()).meta({ description: 'The whole app definition' }),
  responses: { 200: adminAppSchema },
});

/** `DELETE /api/admin/apps/:appId` (204). */
export const deleteApp = defineRoute({
  method: 'DELETE',
  path: '/api/admin/apps/:appId',
  access: 'admin',
  tag: 'admin',
  summary: 'Delete an app created in the console',
  params: appParams,
  responses: { 204: null },
});

/** A console app's client secret as listed: an id, the first characters, who made it and when; never the secret. */
export const clientSecretSchema = z.object({
  id: z.string(),
  /** The secret's first four characters, to tell it from the other one. */
  hint: z.string(),
  /** When it was created (ISO 8601). */
  createdAt: z.string(),
  /** The admin who created it, when that account still exists. */
  createdBy: z.object({ id: z.string(), email: z.string().nullable() }).nullable(),
});
export type ClientSecret = z.output<typeof clientSecretSchema>;

const secretParams = z.object({ appId: requestText(64), secretId: requestText(64) });

/** `GET /api/admin/apps/:appId/secrets`: a console app's live client secrets (409 `app_from_config` for a config app: its are in the file). */
export const listClientSecrets = defineRoute({
  method: 'GET',
  path: '/api/admin/apps/:appId/secrets',
  access: 'admin',
  tag: 'admin',
  summary: "A console app's live OpenID Connect client secrets (hints, never the secrets)",
  params: appParams,
  responses: { 200: z.object({ secrets: z.array(clientSecretSchema) }) },
});

/**
 * `POST /api/admin/apps/:appId/secrets` (201): a new client secret, generated by Gatehouse. The answer
 * holds the secret itself, once: it is kept only as a hash. 409 `client_secret_limit` while two are live
 * (revoke one first); 400 for an app that does not authenticate with a secret.
 */
export const createClientSecret = defineRoute({
  method: 'POST',
  path: '/api/admin/apps/:appId/secrets',
  access: 'admin',
  tag: 'admin',
  summary: 'Create a client secret for a console app (the answer shows it once)',
  params: appParams,
  responses: { 201: clientSecretSchema.extend({ /** The secret: shown now, never again. */ secret: z.string() }) },
});
export type CreatedClientSecret = z.output<(typeof createClientSecret.responses)[201]>;

/** `DELETE /api/admin/apps/:appId/secrets/:secretId` (204): the secret authenticates nothing from now on. */
export const revokeClientSecret = defineRoute({
  method: 'DELETE',
  path: '/api/admin/apps/:appId/secrets/:secretId',
  access: 'admin',
  tag: 'admin',
  summary: "Revoke one of a console app's client secrets",
  params: secretParams,
  responses: { 204: null },
});

export const policySubjectSchema = z.object({
  email: z.string(),
  groups: z.array(z.string()),
  roles: z.array(z.string()),
  claims: z.record(z.string(), z.unknown()),
});

/**
 * `POST /api/admin/policy-test` `{ appId, userId }` or `{ appId, subject }`: would this person reach the
 * app, and why. With `policy`, that policy is evaluated instead of the saved one: the console's draft,
 * tested before it is saved (validated as a saved one would be).
 */
export const testPolicy = defineRoute({
  method: 'POST',
  path: '/api/admin/policy-test',
  access: 'admin',
  tag: 'admin',
  summary: 'Evaluate an app policy for a user or for given claims, naming the rule that decides',
  body: z.strictObject({
    appId: z.string().max(64),
    policy: policySchema.optional(),
    userId: z.string().max(64).optional(),
    subject: z
      .strictObject({
        email: z.string().max(256),
        groups: z.array(z.string().max(256)).max(500).optional(),
        roles: z.array(z.string().max(64)).max(20).optional(),
        claims: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  }),
  responses: {
    200: z.object({
      allow: z.boolean(),
      /** The decision in words ("allowed by allow[0]: groups engineering"). */
      reason: z.string(),
      /** The rule that decided, or null when no allow rule matched. */
      decidedBy: z.object({ list: z.enum(['allow', 'deny']), index: z.number().int(), rule: policyRuleViewSchema }).nullable(),
      /** What the policy was evaluated against. */
      subject: policySubjectSchema,
      /** The provider whose identity was used, for a user. */
      provider: z.object({ id: z.string(), name: z.string() }).nullable(),
    }),
  },
});
export type PolicyTestInput = z.input<typeof testPolicy.body>;
export type PolicyTestResult = z.output<(typeof testPolicy.responses)[200]>;
