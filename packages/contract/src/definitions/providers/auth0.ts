import { z } from 'zod';
import { checkIssuerOverride, checkOidc, claimMappingWith, issuerOverride, oidcFields, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

const auth0Domain = z
  .string()
  .transform((value) => value.toLowerCase().replace(/^https:\/\//, '').replace(/\/+$/, ''))
  .refine((value) => /^(?=.{4,253}$)([a-z0-9-]+\.)+[a-z]{2,63}$/.test(value), { message: 'must be your Auth0 domain, e.g. example.eu.auth0.com (or a custom domain)' });

/**
 * Auth0: `domain` (tenant.region.auth0.com, or a custom domain); the issuer is https://<domain>/ (with
 * the trailing slash Auth0's tokens carry). Groups or roles come from a namespaced custom claim an
 * Auth0 Action adds (`groupsClaim`, e.g. https://example.com/groups): Auth0 refuses bare custom claims.
 */
export const auth0ProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('auth0'),
    domain: auth0Domain,
    /** The namespaced claim the Action sets; short for claims.groups. */
    groupsClaim: z.string().url('must be a namespaced claim, a URL such as https://example.com/groups').optional(),
    claims: claimMappingWith(),
    issuer: issuerOverride,
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    checkIssuerOverride(provider.issuer, auth0Issuer(provider), ctx);
  })
  .transform(({ issuer, ...provider }) =>
    withCreateUsers({
      ...provider,
      claims: provider.groupsClaim ? { ...provider.claims, groups: provider.groupsClaim } : provider.claims,
      issuer: issuer ?? auth0Issuer(provider),
    }),
  );

export function auth0Issuer(provider: { domain: string }): string {
  return `https://${provider.domain}/`;
}

export const auth0Preset: ProviderKindPreset = {
  kind: 'auth0',
  protocol: 'oidc',
  label: 'Auth0',
  description: 'An Auth0 tenant (or its custom domain); groups or roles from a namespaced claim set by an Action.',
  docs: 'docs/providers/auth0.md',
  fields: [
    { name: 'domain', label: 'Auth0 domain', help: 'The tenant domain, or its custom domain.', type: 'text', required: true, placeholder: 'example.eu.auth0.com' },
    { name: 'groupsClaim', label: 'Groups claim', help: 'The namespaced claim your Action puts the groups or roles in.', type: 'text', required: false, placeholder: 'https://example.com/groups' },
  ],
  defaults: { scopes: ['openid', 'email', 'profile'] },
};
