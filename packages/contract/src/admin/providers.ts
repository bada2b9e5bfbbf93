import { z } from 'zod';
import { instant, nullableInstant, nullableString, requestText, userRefSchema } from '../api/common.js';
import { defineRoute } from '../route.js';
import { sources } from './apps.js';
import { signInRefusalReason } from '../definitions/signInRefusal.js';
import { claimMapping, normalisedProvider, providerFieldNames, providerIssues, type ProviderDefinition } from '../definitions/providers/index.js';

export const discoveryStatuses = ['pending', 'ready', 'unavailable'] as const;
export type DiscoveryStatus = (typeof discoveryStatuses)[number];

/**
 * A provider as the admin API shows it: its definition as every kind normalises it
 * (`normalisedProvider`), the kind's own fields under `options`, and its state. Derived, not listed: a
 * field added to the definition is shown here without another line.
 *
 * The client secret and private key are write-only: only whether one is set goes out
 * (`hasClientSecret`, `hasPrivateKey`); this schema is the allow-list that drops anything else.
 */
export const adminProviderSchema = normalisedProvider
  .omit({ clientSecret: true, privateKey: true })
  .extend({
    // The output of fields whose schema normalises what is written (an answer is encoded, never parsed).
    allowedDomains: z.array(z.string()),
    /** Its kind's own fields (those of its preset, see `listProviderPresets`), as set. */
    options: z.record(z.string(), z.union([z.string(), z.boolean(), z.array(z.string())])),
    source: z.enum(sources),
    discovery: z.object({ status: z.enum(discoveryStatuses), error: nullableString, checkedAt: nullableInstant }),
    /**
     * Whether people are offered it. A console provider starts `hidden` (not on the sign-in page, the
     * account page or /api/providers; only a test sign-in reaches it) and is `published` once a test
     * sign-in with it passed (`how: test`) or an admin published it untested (`admin`); `existing`: it
     * was offered before providers were published. Those of gatehouse.yaml are always published (`how: null`).
     */
    publication: z.object({
      state: z.enum(['hidden', 'published']),
      how: z.enum(['test', 'admin', 'existing']).nullable(),
      at: nullableInstant,
    }),
    /** What to register at the IdP as the redirect URI. */
    redirectUri: z.string(),
    backchannelLogoutUri: z.string(),
    hasClientSecret: z.boolean(),
    hasPrivateKey: z.boolean(),
    /** How many identities are linked to it (a provider in use cannot be deleted). */
    linkedIdentities: z.number().int(),
    /**
     * Settings that work but trust the IdP for addresses it is not the authority for ("allowedDomains:
     * …"), one sentence each: the same lines check-config prints.
     */
    warnings: z.array(z.string()),
  });
export type AdminProvider = z.output<typeof adminProviderSchema>;

/**
 * A provider's definition as a providers: entry would write it, from its view (the credential, which the
 * view never has, left out; the kind's own fields beside the common ones): what the console's form edits
 * and what it shows for a provider of the configuration file.
 */
export function definitionOfView(provider: AdminProvider): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...provider, ...provider.options };
  // What its kind normalised for it (GitHub's fixed client authentication, ...) is not the entry's to say.
  return Object.fromEntries(providerFieldNames(provider.kind).flatMap((field) => (shown[field] === undefined ? [] : [[field, shown[field]]])));
}

/** How a preset's own field is typed in the form: one line, a URL, a list (commas or lines), a switch. */
export const presetFieldInputs = ['text', 'url', 'list', 'boolean'] as const;
export type PresetFieldInput = (typeof presetFieldInputs)[number];

/** One of a kind's own fields (a Google Workspace domain list, an Entra tenant, a Keycloak realm URL...). */
export const presetFieldSchema = z.object({
  /** Its key in the definition, beside the common fields (`hostedDomains`, `tenant`, `issuer`). */
  name: z.string(),
  label: z.string(),
  help: z.string(),
  input: z.enum(presetFieldInputs),
  required: z.boolean(),
  placeholder: nullableString,
  /** What the form starts with (a list as an array, a switch as a boolean), or null for empty. */
  default: z.union([z.string(), z.boolean(), z.array(z.string())]).nullable(),
});
export type PresetField = z.output<typeof presetFieldSchema>;

/**
 * A kind of provider the console can add: what "Add provider" starts from. Served from the server's
 * preset definitions, the same ones a `kind:` entry in gatehouse.yaml is validated by.
 */
export const providerPresetSchema = z.object({
  kind: z.string(),
  /** The protocol it speaks: `oidc` (OpenID Connect, with discovery), or another (`github`'s OAuth 2.0). */
  protocol: z.string(),
  label: z.string(),
  description: z.string(),
  /** The page with its registration steps: a path in Gatehouse's documentation (`docs/providers/google.md`) or a URL. */
  docs: z.string(),
  fields: z.array(presetFieldSchema),
  /** What the form starts with for the common fields it sets. */
  /**
   * `claims` is null for a kind without a claim mapping (GitHub). `groupPrefix`: the prefix its groups
   * count under unless another is chosen (GitHub's `github:`, gitlab.com's `gitlab:`), or null for none.
   */
  defaults: z.object({ scopes: z.array(z.string()), claims: claimMapping.nullable(), groupPrefix: nullableString }),
  /** The redirect URI to register at the provider, with `{id}` standing for the provider's id. */
  redirectUriPattern: z.string(),
});
export type ProviderPreset = z.output<typeof providerPresetSchema>;

/** `GET /api/admin/provider-presets`: the kinds of provider the console can add, the generic OpenID Connect first. */
export const listProviderPresets = defineRoute({
  method: 'GET',
  path: '/api/admin/provider-presets',
  access: 'admin',
  tag: 'admin',
  summary: 'The kinds of provider the console can add (generic OpenID Connect and presets), with their own fields and defaults',
  responses: { 200: z.object({ presets: z.array(providerPresetSchema) }) },
});

/**
 * A body checked by `providerSchema`, and handed on as it was written: the server's store applies the
 * schema itself (with the stored credential put back on an edit) and must see what was given, not the
 * defaults filled in. The same issues, paths and words as a providers: entry in gatehouse.yaml gets.
 */
function definitionBody(edit: boolean, description: string) {
  return z
    .custom<ProviderDefinition>()
    .superRefine((value, ctx) => {
      for (const issue of providerIssues(value, { edit })) ctx.addIssue({ ...issue } as Parameters<typeof ctx.addIssue>[0]);
    })
    .meta({ description });
}
const providerParams = z.object({ providerId: requestText(64) });

/** `GET /api/admin/providers`: every provider (never a credential). */
export const listProviders = defineRoute({
  method: 'GET',
  path: '/api/admin/providers',
  access: 'admin',
  tag: 'admin',
  summary: 'Every identity provider with its discovery status and sign-in rules; config providers are read-only; credentials never',
  responses: { 200: z.object({ providers: z.array(adminProviderSchema) }) },
});

export const discoveryPreviewSchema = z.object({
  issuer: z.string(),
  authorizationEndpoint: z.string(),
  tokenEndpoint: z.string(),
  userinfoEndpoint: nullableString,
  endSessionEndpoint: nullableString,
  jwksUri: z.string(),
  scopesSupported: z.array(z.string()),
  claimsSupported: z.array(z.string()),
  codeChallengeMethodsSupported: z.array(z.string()),
  /** `S256` advertised; not advertised at all; or advertised without S256. */
  pkce: z.enum(['S256', 'not-advertised', 'unsupported']),
  pushedAuthorizationRequests: z.enum(['required', 'supported', 'no']),
  backchannelLogout: z.boolean(),
  idTokenSigningAlgValuesSupported: z.array(z.string()),
  tokenEndpointAuthMethodsSupported: z.array(z.string()),
});
export type DiscoveryPreview = z.output<typeof discoveryPreviewSchema>;

/** `POST /api/admin/providers/discover` `{ issuer }`: the discovery document summarised (502 `issuer_unreachable` / `issuer_invalid`). */
export const discoverProvider = defineRoute({
  method: 'POST',
  path: '/api/admin/providers/discover',
  access: 'admin',
  tag: 'admin',
  summary: "Fetch an issuer's OpenID Connect discovery document and summarise it (endpoints, PKCE S256, PAR, back-channel logout)",
  body: z.strictObject({ issuer: z.string().min(1).max(2048) }),
  responses: { 200: discoveryPreviewSchema },
});

/** `POST /api/admin/providers` (201): its issuer must answer discovery; 409 `conflict` (`field`: `id`) when another provider has the id. */
export const createProvider = defineRoute({
  method: 'POST',
  path: '/api/admin/providers',
  access: 'admin',
  tag: 'admin',
  summary: 'Create a provider (validated like a providers: entry in gatehouse.yaml; its issuer must answer discovery)',
  body: definitionBody(false, 'A provider definition, as a providers: entry in gatehouse.yaml'),
  responses: { 201: adminProviderSchema },
});

/** `PUT /api/admin/providers/:providerId`: 409 `provider_from_config` for config providers. */
export const updateProvider = defineRoute({
  method: 'PUT',
  path: '/api/admin/providers/:providerId',
  access: 'admin',
  tag: 'admin',
  summary: 'Replace a console provider; a credential left out is kept, the on/off state is changed by enable/disable',
  params: providerParams,
  body: definitionBody(true, 'A provider definition, as a providers: entry in gatehouse.yaml; left out, the id is the path\'s and the stored credential is kept'),
  responses: { 200: adminProviderSchema },
});

/** `POST /api/admin/providers/:providerId/enable`: offer it on the sign-in page again. */
export const enableProvider = defineRoute({
  method: 'POST',
  path: '/api/admin/providers/:providerId/enable',
  access: 'admin',
  tag: 'admin',
  summary: 'Offer a console provider on the sign-in page again',
  params: providerParams,
  responses: { 200: adminProviderSchema },
});

/** `POST /api/admin/providers/:providerId/disable`: stop offering it; its sessions end at once. */
export const disableProvider = defineRoute({
  method: 'POST',
  path: '/api/admin/providers/:providerId/disable',
  access: 'admin',
  tag: 'admin',
  summary: 'Turn a console provider off: no sign-in with it from the next request on, and its sessions end now',
  params: providerParams,
  responses: { 200: adminProviderSchema },
});

/**
 * `POST /api/admin/providers/:providerId/publish` `{ untested: true }`: offer a hidden console provider
 * although no test sign-in with it passed (the admin confirms knowing that); 409 `provider_from_config`
 * for config providers. A provider published already is answered as it is.
 */
export const publishProvider = defineRoute({
  method: 'POST',
  path: '/api/admin/providers/:providerId/publish',
  access: 'admin',
  tag: 'admin',
  summary: 'Publish a console provider that was never tested (a passing test sign-in publishes it by itself)',
  params: providerParams,
  body: z.object({
    /** The admin's confirmation that it is published without a passing test sign-in. */
    untested: z.literal(true),
  }),
  responses: { 200: adminProviderSchema },
});

/** `DELETE /api/admin/providers/:providerId` (204): 409 `provider_in_use` when identities are linked. */
export const deleteProvider = defineRoute({
  method: 'DELETE',
  path: '/api/admin/providers/:providerId',
  access: 'admin',
  tag: 'admin',
  summary: 'Delete a console provider nobody has signed in with (turn it off otherwise)',
  params: providerParams,
  responses: { 204: null },
});

export const testResults = ['create', 'existing', 'link', 'refused', 'failed'] as const;

/** What a test sign-in found: the profile the provider sent, and what the sign-in rules would decide. */
export const providerTestSchema = z.object({
  id: z.string(),
  time: instant,
  provider: z.object({ id: z.string(), name: z.string() }),
  actor: userRefSchema.nullable(),
  /** `create`, `existing`, `link`: the person would get in; `refused`: a rule says no; `failed`: the sign-in itself failed. */
  result: z.enum(testResults),
  /** The catalogue code and sentence people would get (refused, failed). */
  code: nullableString,
  message: nullableString,
  /** Why it is refused (refused, and failed when a provider's own check refused): one of signInRefusalReasons. */
  reason: signInRefusalReason.nullable(),
  /** Which rule refused, in words (for admins). */
  why: nullableString,
  /** For a configuration error (failed, `provider_misconfigured`): what to change, at the provider or here (for admins). */
  fix: nullableString,
  /** The user the person would be signed in as (existing, link). */
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }).nullable(),
  profile: z
    .object({
      subject: z.string(),
      email: nullableString,
      emailVerified: z.boolean(),
      name: nullableString,
      groups: z.array(z.string()),
      groupCount: z.number().int(),
    })
    .nullable(),
});
export type ProviderTestResult = z.output<typeof providerTestSchema>;

/** `GET /api/admin/providers/:providerId/tests/:testId`: a test sign-in's result (it never changes). */
export const getProviderTest = defineRoute({
  method: 'GET',
  path: '/api/admin/providers/:providerId/tests/:testId',
  access: 'admin',
  tag: 'admin',
  summary: 'The outcome of a test sign-in: the profile the provider sent and what the sign-in rules would decide',
  params: z.object({ providerId: requestText(64), testId: requestText(64) }),
  responses: { 200: providerTestSchema },
});
