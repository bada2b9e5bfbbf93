import {
  definitionOfView,
  formatIssues,
  providerFieldNames,
  providerIssues,
  type AdminProvider,
  type ClaimMapping,
  type ClientAuthMethod,
  type DiscoveryPreview,
  type ParMode,
  type PresetField,
  type ProviderDefinition,
  type ProviderPreset,
} from '@gatehouse/contract';

/**
 * The whole provider form, as typed: lists as text, the credential write-only (empty on edit = keep).
 * What it has no input for is kept in `written`, so saving never drops a field of the definition.
 */
export interface ProviderFormValues {
  /** Which kind of provider (its preset); kept as it is when editing. */
  kind: string;
  /** The definition being edited, as a providers: entry writes it (`definitionOfView`); empty for a new one. */
  written: Record<string, unknown>;
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
    written: {},
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
  return definitionToForm(definitionOfView(provider), preset);
}

/**
 * A definition, as a providers: entry writes it, in the form: each field the form has an input for
 * read from it by its type (a list as text, a map as name=value lines), the rest kept as it is.
 */
export function definitionToForm(written: Record<string, unknown>, preset?: ProviderPreset): ProviderFormValues {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const list = (value: unknown, separator: string) => (Array.isArray(value) ? value.join(separator) : '');
  const empty = emptyProviderForm(preset);
  const trustGroups = written.trustGroups === true;
  const params = typeof written.authorizationParams === 'object' && written.authorizationParams !== null ? (written.authorizationParams as Record<string, string>) : {};
  return {
    ...empty,
    kind: text(written.kind) || empty.kind,
    written,
    id: text(written.id),
    name: text(written.name),
    issuer: text(written.issuer),
    options: Object.fromEntries(presetOptionFields(preset).map((field) => [field.name, optionText(field, written[field.name])])),
    clientId: text(written.clientId),
    // The view never has a credential; a definition typed in (a test's) may.
    clientSecret: text(written.clientSecret),
    clientAuthMethod: (written.clientAuthMethod as ClientAuthMethod | undefined) ?? empty.clientAuthMethod,
    privateKey: written.privateKey === undefined ? '' : JSON.stringify(written.privateKey),
    scopes: Array.isArray(written.scopes) ? list(written.scopes, ' ') : empty.scopes,
    claims: { ...empty.claims, ...(written.claims as Partial<ClaimMapping> | undefined) },
    allowedDomains: list(written.allowedDomains, ', '),
    createUsers: written.createUsers === true,
    trustEmail: written.trustEmail === true,
    assumeEmailVerified: written.assumeEmailVerified === true,
    trustGroups,
    // Unset in the definition: its other claims count as its groups do.
    trustClaims: typeof written.trustClaims === 'boolean' ? written.trustClaims : trustGroups,
    groupPrefix: typeof written.groupPrefix === 'string' ? written.groupPrefix : '',
    pushedAuthorizationRequests: (written.pushedAuthorizationRequests as ParMode | undefined) ?? empty.pushedAuthorizationRequests,
    authorizationParams: Object.entries(params)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n'),
    enabled: written.enabled !== false,
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
 * The definition to send, or the problems found before asking the server: first what only the form can
 * tell (an empty required field, a JSON key that does not parse, a credential neither typed nor stored),
 * then whatever the provider schema itself refuses, in the server's words ("scopes: must include
 * "openid""). An empty credential on edit is left out, so the stored one is kept.
 */
export function formToProvider(
  values: ProviderFormValues,
  stored?: StoredCredentials,
  preset?: Pick<ProviderPreset, 'fields'> & Partial<Pick<ProviderPreset, 'protocol'>>,
): { definition: ProviderDefinition; problems: string[] } {
  const problems: string[] = [];
  // OpenID Connect kinds map claims and may use PAR; another protocol (GitHub's OAuth 2.0) has neither.
  const openIdConnect = (preset?.protocol ?? 'oidc') === 'oidc';
  const isNew = stored === undefined;
  if (!values.name.trim()) problems.push('name: is required');
  // The generic kind is found by its issuer; a preset derives its own unless one is given (a loopback stand-in).
  const issuerRequired = values.kind === GENERIC_KIND || Boolean(preset?.fields.some((field) => field.name === 'issuer' && field.required));
  if (issuerRequired && !values.issuer.trim()) problems.push('issuer: is required');
  const options: Record<string, string | boolean | string[] | undefined> = {};
  for (const field of presetOptionFields(preset)) {
    const value = values.options[field.name];
    if (field.input === 'boolean') {
      options[field.name] = value === true;
      continue;
    }
    const typed = typeof value === 'string' ? value : '';
    const given = field.input === 'list' ? splitList(typed) : typed.trim();
    if (given.length === 0 && field.required) problems.push(`${field.name}: is required`);
    options[field.name] = given.length === 0 ? undefined : given;
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

  const authorizationParams: Record<string, string> = {};
  for (const line of splitList(values.authorizationParams, /\n/)) {
    const at = line.indexOf('=');
    if (at <= 0) problems.push(`authorizationParams: "${line}" is not name=value`);
    else authorizationParams[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }

  const groupPrefix = values.groupPrefix.trim();
  // What the form has inputs for, over what the definition says already; `undefined` takes a field out.
  const typed: Record<string, unknown> = {
    id: values.id.trim(),
    name: values.name.trim(),
    kind: values.kind === GENERIC_KIND ? undefined : values.kind,
    issuer: values.issuer.trim() || undefined,
    ...options,
    clientId: values.clientId.trim(),
    clientAuthMethod: values.clientAuthMethod,
    clientSecret: !usesKey && secret ? secret : undefined,
    privateKey: usesKey ? privateKey : undefined,
    scopes: splitList(values.scopes, /[\s,]+/),
    claims: openIdConnect ? Object.fromEntries(Object.entries(values.claims).map(([name, claim]) => [name, claim.trim() || DEFAULT_CLAIMS[name as keyof ClaimMapping]])) : undefined,
    allowedDomains: splitList(values.allowedDomains.toLowerCase()),
    createUsers: values.createUsers,
    trustEmail: values.trustEmail,
    assumeEmailVerified: values.assumeEmailVerified,
    trustGroups: values.trustGroups,
    trustClaims: values.trustClaims,
    groupPrefix: groupPrefix || undefined,
    pushedAuthorizationRequests: openIdConnect ? values.pushedAuthorizationRequests : undefined,
    authorizationParams,
    // Only when creating; afterwards it is turned on and off with its own switch.
    enabled: isNew ? values.enabled : undefined,
  };
  // Only the fields its kind takes: every kind refuses one it does not know (GitHub, a claim mapping).
  const fields = new Set(providerFieldNames(values.kind));
  const merged: Record<string, unknown> = { ...values.written, ...typed };
  const definition = Object.fromEntries(Object.entries(merged).filter(([field, value]) => value !== undefined && fields.has(field))) as ProviderDefinition;

  // The provider schema's own verdict (the one gatehouse.yaml and the admin API are held to), for the
  // fields the form has not already named a problem with. An edit's credential left out is kept.
  const named = new Set(problems.map((problem) => problem.slice(0, problem.indexOf(':'))));
  const issues = providerIssues(definition, { edit: !isNew }).filter((issue) => !named.has(String(issue.path[0] ?? '')));
  return { definition, problems: [...problems, ...formatIssues(issues)] };
}
