import { z } from 'zod';
import { checkOidc, issuerUrl, oidcFields, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

/** Any OpenID Connect provider, by its issuer (discovery). A definition without `kind` is one of these. */
export const oidcProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('oidc'),
    issuer: issuerUrl,
  })
  .strict()
  .superRefine(checkOidc)
  .transform(withCreateUsers);

export const oidcPreset: ProviderKindPreset = {
  kind: 'oidc',
  protocol: 'oidc',
  label: 'OpenID Connect',
  description: 'Any OpenID Connect provider, found by its issuer URL (discovery).',
  docs: 'docs/providers/README.md',
  fields: [{ name: 'issuer', label: 'Issuer URL', help: 'The URL its /.well-known/openid-configuration is under, exactly as the document names it.', type: 'url', required: true, placeholder: 'https://idp.example.com' }],
  defaults: { scopes: ['openid', 'email', 'profile'] },
};
