import {
  claimMapping,
  endpoints,
  providerPresets,
  type PresetField as PresetFieldView,
  type ProviderConfig,
  type ProviderKindField as PresetField,
  type ProviderKindPreset as ProviderPreset,
  type ProviderPreset as PresetView,
} from '@gatehouse/contract';

const ID = '{id}';
/** What a provider asks for when a preset names no scopes (OpenID Connect's basics). */
const BASIC_SCOPES = ['openid', 'email', 'profile'];

/**
 * The kinds of provider the console can add, as `GET /api/admin/provider-presets` shows them: read from
 * the preset definitions that also validate a `kind:` entry (the contract's definitions/providers/), never a second list.
 * The redirect URI pattern is this Gatehouse's callback, `{id}` standing for the provider's id.
 */
export function presetViews(portalOrigin: string): PresetView[] {
  const redirectUriPattern = `${portalOrigin}${endpoints.callbackUrl(ID)}`.replace(encodeURIComponent(ID), ID);
  return providerPresets.map((preset) => presetView(preset, redirectUriPattern));
}

function presetView(preset: ProviderPreset, redirectUriPattern: string): PresetView {
  const defaults = preset.defaults;
  return {
    kind: preset.kind,
    protocol: preset.protocol,
    label: preset.label,
    description: preset.description,
    docs: preset.docs,
    fields: preset.fields.map((field) => fieldView(field, defaults[field.name])),
    defaults: {
      scopes: isStringList(defaults.scopes) ? defaults.scopes : BASIC_SCOPES,
      // The mapping a provider of this kind gets when its entry names none (the schema's own defaults).
      // Null for a kind that maps no claims (GitHub: OAuth 2.0 and a REST API).
      claims: preset.protocol === 'oidc' ? claimMapping.parse({ ...(typeof defaults.claims === 'object' && defaults.claims !== null ? defaults.claims : {}) }) : null,
      groupPrefix: typeof defaults.groupPrefix === 'string' ? defaults.groupPrefix : null,
    },
    redirectUriPattern,
  };
}

function fieldView(field: PresetField, given: unknown): PresetFieldView {
  return {
    name: field.name,
    label: field.label,
    help: field.help,
    input: field.type,
    required: field.required,
    placeholder: field.placeholder ?? null,
    default: typeof given === 'string' || typeof given === 'boolean' || isStringList(given) ? given : null,
  };
}

/**
 * A provider's values for its kind's own fields (a Workspace domain list, a tenant), so the console's
 * form can edit them. The common fields are shown by name already; a credential is never a preset field
 * and is dropped here should one ever be named one.
 */
export function presetOptions(provider: ProviderConfig): Record<string, string | boolean | string[]> {
  const preset = providerPresets.find((candidate) => candidate.kind === provider.kind);
  const values: Record<string, string | boolean | string[]> = {};
  for (const field of preset?.fields ?? []) {
    if (field.name === 'clientSecret' || field.name === 'privateKey') continue;
    const value = (provider as unknown as Record<string, unknown>)[field.name];
    if (typeof value === 'string' || typeof value === 'boolean' || isStringList(value)) values[field.name] = value;
  }
  return values;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
