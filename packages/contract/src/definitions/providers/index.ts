import { z } from 'zod';
import { auth0Preset, auth0ProviderSchema } from './auth0.js';
import { entraPreset, entraProviderSchema } from './entra.js';
import { githubPreset, githubProviderSchema } from './github.js';
import { gitlabPreset, gitlabProviderSchema } from './gitlab.js';
import { googlePreset, googleProviderSchema } from './google.js';
import { keycloakPreset, keycloakProviderSchema } from './keycloak.js';
import { oidcPreset, oidcProviderSchema } from './oidc.js';
import { oktaPreset, oktaProviderSchema } from './okta.js';
import { claimMapping, commonFields, oidcFields, privateKeyJwk } from './common.js';
import type { ProviderKindPreset } from './preset.js';

export type { ProviderKindField, ProviderKindPreset } from './preset.js';
export { claimMapping, clientAuthMethods, commonFields, groupPrefix, issuerUrl, parModes, privateKeyJwk, type ClientAuthMethod, type ParMode } from './common.js';
export { auth0Issuer } from './auth0.js';
export { CONSUMER_TENANT, ENTRA_AUTHORITIES, GRAPH_URLS, entraIssuer, isMultiTenant } from './entra.js';
export { GITHUB_GROUP_PREFIX, githubDefinition, githubIssuer, type GitHubFixed } from './github.js';
export { GITLAB_COM, GITLAB_COM_GROUP_PREFIX } from './gitlab.js';
export { GOOGLE_ISSUER } from './google.js';
export { keycloakIssuer } from './keycloak.js';
export { oktaIssuer } from './okta.js';

/**
 * Every kind of provider a `providers:` entry in gatehouse.yaml, a provider saved in the console, and
 * the console's form may be, picked by `kind:`: the one definition of a provider, which the server's
 * configuration, the admin API's bodies and views, and the console's form all read. An entry without
 * `kind` is a generic OpenID Connect provider (`oidc`), as before kinds existed: every older
 * gatehouse.yaml and every stored console definition still loads.
 *
 * To add a kind: a schema in providers/<kind>.ts beside this file that normalises to the common fields
 * (see `normalisedProvider`) plus its own options, its `ProviderKindPreset` for the console, both listed
 * below; and its runtime in the server's providers/ (see the comment at the top of its kinds/index.ts).
 * To add a field every kind has: `commonFields` (common.ts); it is then read from gatehouse.yaml, taken
 * by the console API, shown in its view and kept by its form without another line.
 */
const kinds = [oidcProviderSchema, googleProviderSchema, entraProviderSchema, oktaProviderSchema, keycloakProviderSchema, auth0ProviderSchema, gitlabProviderSchema, githubProviderSchema] as const;

export const providerPresets: readonly ProviderKindPreset[] = [oidcPreset, googlePreset, entraPreset, oktaPreset, keycloakPreset, auth0Preset, gitlabPreset, githubPreset];

export const providerKinds = providerPresets.map((preset) => preset.kind);

/**
 * The fields an entry of a kind may name (its schema's keys; an unknown kind: the generic one's): the
 * console's form sends these and no other, since every kind refuses a field it does not know.
 */
export function providerFieldNames(kind: string): readonly string[] {
  const schema = kinds.find((candidate) => candidate.in.shape.kind.value === kind) ?? oidcProviderSchema;
  return Object.keys(schema.in.shape);
}

export const providerSchema = z.preprocess(
  (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) && !('kind' in value) ? { ...value, kind: 'oidc' } : value),
  z.discriminatedUnion('kind', kinds, {
    error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${providerKinds.join(', ')}` : undefined),
  }),
);

/** What an edit may leave out: the id (the route names it) and the credential (the stored one is kept). */
const KEPT_ON_EDIT: readonly PropertyKey[] = ['id', 'clientSecret', 'privateKey'];

/**
 * What `providerSchema` finds wrong with an entry, all at once, each with its path. `edit`: a console
 * edit of a stored provider, which may leave out its id (the route names it) and its credential (the
 * stored one is kept), is not refused for that alone; the server checks the entry whole again once both
 * are back in it. A credential given empty is refused once, not also as missing.
 */
export function providerIssues(value: unknown, { edit = false } = {}): z.core.$ZodIssue[] {
  const issues = providerSchema.safeParse(value).error?.issues ?? [];
  if (!edit || typeof value !== 'object' || value === null) return issues;
  const given = value as Record<string, unknown>;
  const seen = new Set<PropertyKey>();
  return issues.filter((issue) => {
    const field = issue.path.length === 1 ? issue.path[0]! : undefined;
    if (field === undefined || !KEPT_ON_EDIT.includes(field)) return true;
    if (given[field as string] === undefined || seen.has(field)) return false;
    seen.add(field);
    return true;
  });
}

/** One provider, as every part of Gatehouse reads it: the common fields, `kind`, and its kind's own options. */
export type ProviderConfig = z.output<typeof providerSchema>;
export type ProviderKind = ProviderConfig['kind'];
/** A provider of one kind. */
export type ProviderOf<K extends ProviderKind> = Extract<ProviderConfig, { kind: K }>;

type KindInput = z.input<(typeof kinds)[number]>;
/**
 * A provider definition as it is written (a `providers:` entry, a console body, the form's result):
 * defaults may be left out, and so may `kind` for the generic OpenID Connect provider.
 */
export type ProviderDefinition = Exclude<KindInput, { kind: 'oidc' }> | (Omit<Extract<KindInput, { kind: 'oidc' }>, 'kind'> & { kind?: 'oidc' });

/**
 * What every kind normalises to, whatever protocol it speaks: the sign-in rules, admins, groups, the
 * console and the stores read only these. The common fields as their schema outputs them, plus what
 * each kind derives or fixes: an `issuer` (for a kind that is not OpenID Connect, the namespace its
 * subjects live in, e.g. GitHub's base URL), the client authentication, scopes, claim mapping, PAR and
 * whether new people get a user.
 */
export const normalisedProvider = z.object({
  ...commonFields,
  kind: z.string(),
  issuer: z.string(),
  privateKey: privateKeyJwk.optional(),
  clientAuthMethod: oidcFields.clientAuthMethod,
  scopes: z.array(z.string()),
  claims: claimMapping,
  pushedAuthorizationRequests: oidcFields.pushedAuthorizationRequests,
  createUsers: z.boolean(),
});
export type CommonProviderConfig = z.output<typeof normalisedProvider>;
/** Which claim carries each part of a person's profile. */
export type ClaimMapping = z.output<typeof claimMapping>;

// Every kind must normalise to the common shape: a compile error here names the kind that does not.
const _everyKindIsCommon = (provider: ProviderConfig): CommonProviderConfig => provider;
void _everyKindIsCommon;
