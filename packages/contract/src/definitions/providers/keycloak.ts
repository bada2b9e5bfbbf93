import { z } from 'zod';
import { baseUrl, checkOidc, oidcFields, scopesWith, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

/**
 * Keycloak: `baseUrl` (without /realms, and with /auth for Keycloak before 17) and `realm`; the issuer
 * is <baseUrl>/realms/<realm>. Groups come from a "Group Membership" mapper on the client (claim
 * `groups`); back-channel logout is Keycloak's own (its client's "Backchannel logout URL").
 */
export const keycloakProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('keycloak'),
    baseUrl,
    realm: z.string().regex(/^[A-Za-z0-9._-]{1,255}$/, 'must be the realm name (letters, digits, ".", "_", "-")'),
    scopes: scopesWith(['openid', 'email', 'profile']),
    issuer: z.string().optional(),
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    if (provider.issuer !== undefined && provider.issuer !== keycloakIssuer(provider)) {
      ctx.addIssue({ code: 'custom', path: ['issuer'], message: `is derived from baseUrl and realm (${keycloakIssuer(provider)}): leave it out` });
    }
  })
  .transform(({ issuer: _given, ...provider }) => withCreateUsers({ ...provider, issuer: keycloakIssuer(provider) }));

export function keycloakIssuer(provider: { baseUrl: string; realm: string }): string {
  return `${provider.baseUrl}/realms/${encodeURIComponent(provider.realm)}`;
}

export const keycloakPreset: ProviderKindPreset = {
  kind: 'keycloak',
  protocol: 'oidc',
  label: 'Keycloak',
  description: 'A Keycloak realm; groups through a Group Membership mapper, back-channel logout supported.',
  docs: 'docs/providers/keycloak.md',
  fields: [
    { name: 'baseUrl', label: 'Keycloak URL', help: 'Where Keycloak is served (with /auth for versions before 17), without /realms.', type: 'url', required: true, placeholder: 'https://sso.example.com' },
    { name: 'realm', label: 'Realm', help: 'The realm people sign in to.', type: 'text', required: true, placeholder: 'staff' },
  ],
  defaults: { scopes: ['openid', 'email', 'profile'] },
};
