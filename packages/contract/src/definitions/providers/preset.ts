/**
 * What the console shows of a kind of provider (`GET /api/admin/provider-presets`) and what its "Add
 * provider" form starts from: a label, a sentence, the page of docs/ with the registration steps, and
 * the kind's own fields (the common ones — id, name, client id and secret, sign-in rules — every form has).
 */
export interface ProviderKindPreset {
  kind: string;
  /** The protocol spoken: `oidc` for OpenID Connect (the generic provider and its presets). */
  protocol: 'oidc' | (string & {});
  label: string;
  description: string;
  /** The documentation page, relative to the repository: docs/providers/<kind>.md. */
  docs: string;
  /** The redirect URI to register at the IdP is the provider's `redirectUri` (`<publicUrl>/.gatehouse/callback/<id>`). */
  fields: ProviderKindField[];
  /** Values the form starts with (scopes, claims), as a providers: entry would write them. */
  defaults: Record<string, unknown>;
}

export interface ProviderKindField {
  name: string;
  label: string;
  help: string;
  type: 'text' | 'url' | 'list' | 'boolean';
  required: boolean;
  placeholder?: string;
}
