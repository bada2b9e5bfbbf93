import { z } from 'zod';
import { auth0Preset, auth0ProviderSchema } from './auth0.js';
import { entraPreset, entraProviderSchema } from './entra.js';
import { githubPreset, githubProviderSchema } from './github.js';
import { gitlabPreset, gitlabProviderSchema } from './gitlab.js';
import { googlePreset, googleProviderSchema } from './google.js';
import { keycloakPreset, keycloakProviderSchema } from './keycloak.js';
import { oidcPreset, oidcProviderSchema } from './oidc.js';
import { oktaPreset, oktaProviderSchema } from './okta.js';
import type { claimMapping, privateKeyJwk } from './common.js';
import type { ProviderPreset } from './preset.js';

export type { PresetField, ProviderPreset } from './preset.js';
export { claimMapping, groupPrefix, issuerUrl, privateKeyJwk } from './common.js';

/**
 * Every kind of provider a `providers:` entry (or a provider saved in the console) may be, picked by
 * `kind:`. An entry without `kind` is a generic OpenID Connect provider (`oidc`), as before kinds
 * existed: every older gatehouse.yaml and every stored console definition still loads.
 *
 * To add a kind: a schema in config/providers/<kind>.ts that normalises to the common fields (see
 * `CommonProviderConfig`) plus its own options, its `ProviderPreset` for the console, both listed
 * below; and its runtime in authenticate/providers/ (see the comment at the top of its index.ts).
 */
const kinds = [oidcProviderSchema, googleProviderSchema, entraProviderSchema, oktaProviderSchema, keycloakProviderSchema, auth0ProviderSchema, gitlabProviderSchema, githubProviderSchema] as const;

export const providerPresets: readonly ProviderPreset[] = [oidcPreset, googlePreset, entraPreset, oktaPreset, keycloakPreset, auth0Preset, gitlabPreset, githubPreset];

export const providerKinds = providerPresets.map((preset) => preset.kind);

export const providerSchema = z.preprocess(
  (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) && !('kind' in value) ? { ...value, kind: 'oidc' } : value),
  z.discriminatedUnion('kind', kinds, {
    error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${providerKinds.join(', ')}` : undefined),
  }),
);

/** One provider, as every part of Gatehouse reads it: the common fields, `kind`, and its kind's own options. */
export type ProviderConfig = z.output<typeof providerSchema>;
export type ProviderKind = ProviderConfig['kind'];
/** A provider of one kind. */
export type ProviderOf<K extends ProviderKind> = Extract<ProviderConfig, { kind: K }>;

/**
 * What every kind normalises to, whatever protocol it speaks: the sign-in rules, admins, groups, the
 * console and the stores read only these. (A kind that is not OpenID Connect still names an `issuer`:
 * the namespace its subjects live in, e.g. GitHub's base URL.)
 */
export interface CommonProviderConfig {
  id: string;
  name: string;
  kind: string;
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  privateKey?: z.output<typeof privateKeyJwk> | undefined;
  clientAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  scopes: string[];
  claims: z.output<typeof claimMapping>;
  allowedDomains: string[];
  createUsers: boolean;
  trustEmail: boolean;
  assumeEmailVerified: boolean;
  trustGroups: boolean;
  groupPrefix?: string | undefined;
  trustClaims?: boolean | undefined;
  pushedAuthorizationRequests: 'auto' | 'always' | 'never';
  authorizationParams: Record<string, string>;
  chooseAccountPrompt?: 'select_account' | 'login' | undefined;
  enabled: boolean;
}

// Every kind must normalise to the common shape: a compile error here names the kind that does not.
const _everyKindIsCommon = (provider: ProviderConfig): CommonProviderConfig => provider;
void _everyKindIsCommon;
