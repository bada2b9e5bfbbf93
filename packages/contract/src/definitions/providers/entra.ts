import { isLoopbackHost, parsedUrl } from '../urls.js';
import { z } from 'zod';
import { checkIssuerOverride, checkOidc, claimMappingWith, httpsOrLoopback, oidcFields, scopesWith, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

/** Microsoft's sign-in hosts (global and national clouds) and the Microsoft Graph of each. */
export const ENTRA_AUTHORITIES = ['https://login.microsoftonline.com', 'https://login.microsoftonline.us', 'https://login.partner.microsoftonline.cn'] as const;
export const GRAPH_URLS = ['https://graph.microsoft.com', 'https://graph.microsoft.us', 'https://dod-graph.microsoft.us', 'https://microsoftgraph.chinacloudapi.cn'] as const;
const MULTI_TENANT = ['organizations', 'common'] as const;
/**
 * The tenant of personal Microsoft accounts (outlook.com, hotmail.com, ...), which sign in through
 * `common`: admitted only when `tenants` lists it (accounts/admission.ts).
 */
export const CONSUMER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

const tenantId = z.string().toLowerCase().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a tenant id (a GUID)');
const tenant = z
  .string()
  .transform((value) => value.toLowerCase())
  .refine((value) => tenantId.safeParse(value).success || (MULTI_TENANT as readonly string[]).includes(value) || /^(?=.{4,253}$)([a-z0-9-]+\.)+[a-z]{2,63}$/.test(value), {
    message: 'must be a tenant id (GUID), a verified domain of the tenant (contoso.onmicrosoft.com), or organizations / common for multi-tenant',
  });

/**
 * Microsoft Entra ID. `tenant`: one tenant (its id or a verified domain), or `organizations` / `common`
 * for a multi-tenant app, which then names the tenants it admits (`tenants`, checked against the ID
 * token's `tid`) or says `allowAnyTenant: true` — never silently any tenant of Entra ID.
 */
export const entraProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('entra'),
    tenant,
    tenants: z.array(tenantId).max(100).default([]),
    allowAnyTenant: z.boolean().default(false),
    authority: z.enum(ENTRA_AUTHORITIES).default('https://login.microsoftonline.com'),
    graphUrl: z.enum(GRAPH_URLS).default('https://graph.microsoft.com'),
    /** Groups beyond the token's limit (overage) are read from Microsoft Graph with the access token. */
    resolveGroupOverage: z.boolean().default(true),
    // Entra's groups claim holds group object ids; offline_access gives the refresh token the claims re-check needs.
    scopes: scopesWith(['openid', 'email', 'profile', 'offline_access']),
    claims: claimMappingWith({ emailVerified: 'xms_edov' }),
    /**
     * For tests only: every request to `authority` and `graphUrl` goes to this loopback origin instead
     * (the path kept), so a stand-in answers as Microsoft does while the checks stay those of the real
     * hosts. Loopback only: it can send nothing off this machine.
     */
    loopbackStandIn: httpsOrLoopback.optional(),
    issuer: z.string().optional(),
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    const multiTenant = (MULTI_TENANT as readonly string[]).includes(provider.tenant);
    if (multiTenant) {
      if (provider.tenants.length === 0 && !provider.allowAnyTenant) {
        ctx.addIssue({ code: 'custom', path: ['tenants'], message: `is required with tenant: ${provider.tenant} (the tenant ids admitted), unless allowAnyTenant: true says any Entra ID tenant may sign in` });
      }
      if (provider.tenants.length > 0 && provider.allowAnyTenant) {
        ctx.addIssue({ code: 'custom', path: ['allowAnyTenant'], message: 'contradicts tenants: give one or the other' });
      }
      if (provider.authority !== 'https://login.microsoftonline.com') {
        ctx.addIssue({ code: 'custom', path: ['tenant'], message: 'must be one tenant on a national cloud (multi-tenant issuer validation is supported on login.microsoftonline.com only)' });
      }
    } else if (provider.tenants.length > 0 || provider.allowAnyTenant) {
      ctx.addIssue({ code: 'custom', path: ['tenants'], message: 'is for a multi-tenant app (tenant: organizations or common); one tenant admits only itself' });
    }
    // Threat: another tenant's administrator deciding which emails count as verified here. Vouching for
    // a tenant's emails is possible only where exactly one tenant is admitted: yours.
    if (provider.assumeEmailVerified && multiTenant && (provider.allowAnyTenant || provider.tenants.length !== 1)) {
      ctx.addIssue({
        code: 'custom',
        path: ['assumeEmailVerified'],
        message: "vouches for one tenant's emails: it needs exactly one tenant admitted (a single-tenant app, or tenants with one id), since any other tenant's administrator sets the emails of their own people",
      });
    }
    if (provider.loopbackStandIn !== undefined) {
      const url = parsedUrl(provider.loopbackStandIn);
      if (!url || !isLoopbackHost(url.hostname)) ctx.addIssue({ code: 'custom', path: ['loopbackStandIn'], message: 'must be a loopback URL (tests only)' });
    }
    checkIssuerOverride(provider.issuer, entraIssuer(provider), ctx, { loopback: false });
  })
  .transform(({ issuer: _given, ...provider }) => withCreateUsers({ ...provider, issuer: entraIssuer(provider) }));

/** The issuer URL discovery starts from: `<authority>/<tenant>/v2.0`. */
export function entraIssuer(provider: { authority: string; tenant: string }): string {
  return `${provider.authority}/${provider.tenant}/v2.0`;
}

export function isMultiTenant(provider: { tenant: string }): boolean {
  return (MULTI_TENANT as readonly string[]).includes(provider.tenant);
}

export const entraPreset: ProviderKindPreset = {
  kind: 'entra',
  protocol: 'oidc',
  label: 'Microsoft Entra ID',
  description: 'Work and school accounts of one Entra ID tenant, or of the tenants you list (multi-tenant); groups beyond the token limit read from Microsoft Graph.',
  docs: 'docs/providers/entra.md',
  fields: [
    { name: 'tenant', label: 'Tenant', help: 'The tenant id (GUID) or a verified domain; organizations or common for a multi-tenant app.', type: 'text', required: true, placeholder: '00000000-0000-0000-0000-000000000000' },
    { name: 'tenants', label: 'Admitted tenants', help: 'Multi-tenant only: the tenant ids whose people may sign in (the ID token’s tid).', type: 'list', required: false },
    { name: 'allowAnyTenant', label: 'Admit any tenant', help: 'Multi-tenant only: any Entra ID tenant may sign in. Leave off unless you mean it.', type: 'boolean', required: false },
  ],
  defaults: { scopes: ['openid', 'email', 'profile', 'offline_access'], claims: { emailVerified: 'xms_edov' } },
};
