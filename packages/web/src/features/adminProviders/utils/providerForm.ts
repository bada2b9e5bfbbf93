import {
  idSchema,
  type AdminProvider,
  type ClaimMapping,
  type ClientAuthMethod,
  type DiscoveryPreview,
  type ParMode,
  type PresetField,
  type ProviderDefinition,
  type ProviderPreset,
} from '@gatehouse/contract';

/** The whole provider form, as typed: lists as text, the credential write-only (empty on edit = keep). */
export interface ProviderFormValues {
  /** Which kind of provider (its preset); kept as it is when editing. */
  kind: string;
  id: string;
  name: string;
  issuer: string;
  /** The preset's own fields other than the issuer: lists as text (commas or lines), switches as booleans. */
  options: Record<string, string | boolean>;
  clientId: string;
  clientSecret: string;
  clientAuthMethod: ClientAuthMethod;
  /** A private JWK as JSON text (private_key_jwt). */
  privateKey: string;
  /** Separated by spaces or commas. */
  scopes: string;
  claims: ClaimMapping;
  /** Separated by commas or new lines. */
  allowedDomains: string;
  createUsers: boolean;
  trustEmail: boolean;
  assumeEmailVerified: boolean;
  trustGroups: boolean;
  trustClaims: boolean;
  /** Empty: no prefix. */
  groupPrefix: string;
  pushedAuthorizationRequests: ParMode;
  /** `name=value`, one per line. */
  authorizationParams: string;
  enabled: boolean;
}

/** What is already stored for a provider being edited (so an empty credential field means "keep it"). */
export interface StoredCredentials {
  hasClientSecret: boolean;
  hasPrivateKey: boolean;
}

export const DEFAULT_CLAIMS: ClaimMapping = { email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'groups' };
export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
/** The server's rule (config/schema.ts `groupPrefix`): printable ASCII, no spaces or commas, ending with ":" or "/". */
const GROUP_PREFIX = /^[\x21-\x2b\x2d-\x7e]{1,63}[:/]$/;

export const AUTH_METHOD_LABELS: Record<ClientAuthMethod, string> = {
  client_secret_basic: 'Client secret (HTTP Basic)',
  client_secret_post: 'Client secret (in the request body)',
  private_key_jwt: 'Private key (signed JWT)',
};

export const PAR_LABELS: Record<ParMode, string> = {
  auto: 'When the provider offers it',
  always: 'Always',
  never: 'Never',
};

/** The generic OpenID Connect kind: found by its issuer URL, with a discovery preview. */
export const GENERIC_KIND = 'oidc';

/** A preset field's value as the form holds it: a list as text, a switch as a boolean. */
function optionText(field: Pick<PresetField, 'input'>, value: unknown): string | boolean {
  if (field.input === 'boolean') return value === true;
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : '';
}

/** The preset's own fields that the form shows in their own section (the issuer has a place of its own). */
export function presetOptionFields(preset: Pick<ProviderPreset, 'fields'> | undefined): PresetField[] {
  return (preset?.fields ?? []).filter((field) => field.name !== 'issuer');
}

export function emptyProviderForm(preset?: ProviderPreset): ProviderFormValues {
  // A preset's provider starts named after it ("Google", id "google"); the generic one starts blank.
  const name = preset && preset.kind !== GENERIC_KIND ? preset.label : '';
  return {
    kind: preset?.kind ?? GENERIC_KIND,
    id: slugFromName(name),
    name,
    issuer: '',
    options: Object.fromEntries(presetOptionFields(preset).map((field) => [field.name, optionText(field, field.default)])),
    clientId: '',
    clientSecret: '',
    clientAuthMethod: 'client_secret_basic',
    privateKey: '',
    scopes: (preset?.defaults.scopes ?? DEFAULT_SCOPES).join(' '),
    claims: { ...DEFAULT_CLAIMS, ...preset?.defaults.claims },
    allowedDomains: '',
    createUsers: false,
    trustEmail: false,
    assumeEmailVerified: false,
    // Off for every new provider: any IdP can assert any group name (fail closed).
    trustGroups: false,
    trustClaims: false,
    groupPrefix: preset?.defaults.groupPrefix ?? '',
    pushedAuthorizationRequests: 'auto',
    authorizationParams: '',
    enabled: true,
  };
}

export function providerToForm(provider: AdminProvider, preset?: ProviderPreset): ProviderFormValues {
  const fields = presetOptionFields(preset);
  return {
    kind: provider.kind,
    id: provider.id,
    name: provider.name,
    issuer: provider.issuer,
    options: Object.fromEntries(fields.map((field) => [field.name, optionText(field, provider.options[field.name])])),
    clientId: provider.clientId,
    clientSecret: '',
    clientAuthMethod: provider.clientAuthMethod,
    privateKey: '',
    scopes: provider.scopes.join(' '),
    claims: { ...DEFAULT_CLAIMS, ...provider.claims },
    allowedDomains: provider.allowedDomains.join(', '),
    createUsers: provider.createUsers,
    trustEmail: provider.trustEmail,
    assumeEmailVerified: provider.assumeEmailVerified,
    trustGroups: provider.trustGroups,
    trustClaims: provider.trustClaims,
    groupPrefix: provider.groupPrefix ?? '',
    pushedAuthorizationRequests: provider.pushedAuthorizationRequests,
    authorizationParams: Object.entries(provider.authorizationParams)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n'),
    enabled: provider.enabled,
  };
}

/** "a, b\nc  b" → ["a", "b", "c"]: split on the separators, trimmed, no blanks, no repeats. */
export function splitList(text: string, separators: RegExp = /[,\n]/): string[] {
  return [
    ...new Set(
      text
        .split(separators)
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
}

/** A suggested id for a name: "Corp SSO (EU)" → "corp-sso-eu". */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** The redirect URI to register at the IdP: Gatehouse's callback for this provider id. */
export function redirectUriFor(origin: string, id: string): string {
  // Before an id is typed, a placeholder people read as one (`<id>`), not its percent-encoding.
  return `${origin}/.gatehouse/callback/${id ? encodeURIComponent(id) : '<id>'}`;
}

export function backchannelLogoutUriFor(origin: string, id: string): string {
  return `${origin}/.gatehouse/backchannel-logout/${id ? encodeURIComponent(id) : '<id>'}`;
}

/**
 * Scopes worth asking for, from what the issuer supports: the OpenID basics, plus `groups` (for
 * policies) and `offline_access` (so claims can be re-checked during a session) when it offers them.
 */
export function suggestedScopes(preview: Pick<DiscoveryPreview, 'scopesSupported'>): string {
  const extra = ['groups', 'offline_access'].filter((scope) => preview.scopesSupported.includes(scope));
  return [...DEFAULT_SCOPES, ...extra].join(' ');
}

/**
 * The definition to send, or the problems found before asking the server (named like the server's,
 * "clientSecret: is required"). An empty credential on edit is left out, so the stored one is kept.
 */
export function formToProvider(
  values: ProviderFormValues,
  stored?: StoredCredentials,
  preset?: Pick<ProviderPreset, 'fields'> & Partial<Pick<ProviderPreset, 'protocol'>>,
): { definition: ProviderDefinition; problems: string[] } {
  const problems: string[] = [];
  // OpenID Connect kinds need `openid` and map claims; another protocol (GitHub's OAuth 2.0) has neither.
  const openIdConnect = (preset?.protocol ?? 'oidc') === 'oidc';
  const isNew = stored === undefined;
  const id = values.id.trim();
  // The server's own rule and words for an id ("id: must be lowercase letters, digits and dashes (at most 63)").
  const idProblem = isNew ? idSchema.safeParse(id).error?.issues[0]?.message : undefined;
  if (idProblem) problems.push(`id: ${idProblem}`);
  if (!values.name.trim()) problems.push('name: is required');
  // The generic kind is found by its issuer; a preset derives its own unless one is given (a loopback stand-in).
  const issuerRequired = values.kind === GENERIC_KIND || Boolean(preset?.fields.some((field) => field.name === 'issuer' && field.required));
  if (issuerRequired && !values.issuer.trim()) problems.push('issuer: is required');
  const options: Record<string, string | boolean | string[]> = {};
  for (const field of presetOptionFields(preset)) {
    const value = values.options[field.name];
    if (field.input === 'boolean') {
      options[field.name] = value === true;
      continue;
    }
    const typed = typeof value === 'string' ? value : '';
    const given = field.input === 'list' ? splitList(typed) : typed.trim();
    if (given.length === 0) {
      if (field.required) problems.push(`${field.name}: is required`);
      continue;
    }
    options[field.name] = given;
  }
  if (!values.clientId.trim()) problems.push('clientId: is required');

  const usesKey = values.clientAuthMethod === 'private_key_jwt';
  const secret = values.clientSecret;
  if (!usesKey && !secret && !stored?.hasClientSecret) problems.push('clientSecret: is required');
  let privateKey: Record<string, unknown> | undefined;
  if (usesKey && values.privateKey.trim()) {
    try {
      const parsed: unknown = JSON.parse(values.privateKey);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new TypeError('not an object');
      privateKey = parsed as Record<string, unknown>;
    } catch {
      problems.push('privateKey: must be a JWK in JSON, such as {"kty":"EC","crv":"P-256",…,"d":"…"}');
    }
  } else if (usesKey && !stored?.hasPrivateKey) {
    problems.push('privateKey: is required for private_key_jwt');
  }

  const scopes = splitList(values.scopes, /[\s,]+/);
  if (openIdConnect && !scopes.includes('openid')) problems.push('scopes: must include "openid"');

  const groupPrefix = values.groupPrefix.trim();
  if (groupPrefix && !GROUP_PREFIX.test(groupPrefix)) {
    problems.push('groupPrefix: must be 2-64 printable ASCII characters without spaces or commas, ending with ":" or "/" (e.g. "partner:")');
  }

  const authorizationParams: Record<string, string> = {};
  for (const line of splitList(values.authorizationParams, /\n/)) {
    const at = line.indexOf('=');
    if (at <= 0) problems.push(`authorizationParams: "${line}" is not name=value`);
    else authorizationParams[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }

  const definition: ProviderDefinition = {
    id,
    name: values.name.trim(),
    ...(values.kind !== GENERIC_KIND ? { kind: values.kind } : {}),
    ...(values.issuer.trim() ? { issuer: values.issuer.trim() } : {}),
    ...options,
    clientId: values.clientId.trim(),
    clientAuthMethod: values.clientAuthMethod,
    ...(!usesKey && secret ? { clientSecret: secret } : {}),
    ...(usesKey && privateKey ? { privateKey } : {}),
    scopes,
    ...(openIdConnect
      ? { claims: Object.fromEntries(Object.entries(values.claims).map(([name, claim]) => [name, claim.trim() || DEFAULT_CLAIMS[name as keyof ClaimMapping]])) as unknown as ClaimMapping }
      : {}),
    allowedDomains: splitList(values.allowedDomains.toLowerCase()),
    createUsers: values.createUsers,
    trustEmail: values.trustEmail,
    assumeEmailVerified: values.assumeEmailVerified,
    trustGroups: values.trustGroups,
    trustClaims: values.trustClaims,
    ...(groupPrefix ? { groupPrefix } : {}),
    ...(openIdConnect ? { pushedAuthorizationRequests: values.pushedAuthorizationRequests } : {}),
    authorizationParams,
    ...(isNew ? { enabled: values.enabled } : {}),
  };
  return { definition, problems };
}
