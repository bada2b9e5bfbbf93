import { z } from 'zod';
import { checkIssuerOverride, checkOidc, issuerOverride, oidcFields, scopesWith, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

const oktaDomain = z
  .string()
  .transform((value) => value.toLowerCase().replace(/^https:\/\//, '').replace(/\/+$/, ''))
  .refine((value) => /^(?=.{4,253}$)([a-z0-9-]+\.)+[a-z]{2,63}$/.test(value), { message: 'must be your Okta domain, e.g. example.okta.com (or a custom domain)' });

/**
 * Okta. `domain` (example.okta.com, or a custom domain) and, for a custom authorization server,
 * `authorizationServerId` ("default" or its id): the issuer is https://<domain> for the org server,
 * https://<domain>/oauth2/<id> for a custom one. Groups come as the `groups` claim of a custom server
 * (a groups claim added to it, and the `groups` scope asked for).
 */
export const oktaProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('okta'),
    domain: oktaDomain,
    authorizationServerId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be "default" or the id of a custom authorization server').optional(),
    scopes: scopesWith(['openid', 'email', 'profile', 'offline_access', 'groups']),
    issuer: issuerOverride,
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    checkIssuerOverride(provider.issuer, oktaIssuer(provider), ctx);
  })
  .transform(({ issuer, ...provider }) => withCreateUsers({ ...provider, issuer: issuer ?? oktaIssuer(provider) }));

export function oktaIssuer(provider: { domain: string; authorizationServerId?: string | undefined }): string {
  return provider.authorizationServerId ? `https://${provider.domain}/oauth2/${provider.authorizationServerId}` : `https://${provider.domain}`;
}

export const oktaPreset: ProviderKindPreset = {
  kind: 'okta',
  protocol: 'oidc',
  label: 'Okta',
  description: 'Okta, with its org authorization server or a custom one (groups through the groups scope).',
  docs: 'docs/providers/okta.md',
  fields: [
    { name: 'domain', label: 'Okta domain', help: 'Your Okta domain, or its custom domain.', type: 'text', required: true, placeholder: 'example.okta.com' },
    { name: 'authorizationServerId', label: 'Authorization server', help: '"default" or the id of a custom authorization server; empty for the org server (which sends no groups claim).', type: 'text', required: false, placeholder: 'default' },
  ],
  defaults: { scopes: ['openid', 'email', 'profile', 'offline_access', 'groups'] },
};
