import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
export type ParMode = 'auto' | 'always' | 'never';

/** Which claim carries each part of a person's profile. */
export interface ClaimMapping {
  email: string;
  emailVerified: string;
  name: string;
  picture: string;
  groups: string;
}

/**
 * A provider definition as the console sends it (POST, PUT): the shape of a `providers:` entry in
 * gatehouse.yaml. The credential is write-only: left out of a PUT, the stored one is kept.
 */
export interface ProviderDefinition {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** A private JWK (private_key_jwt). */
  privateKey?: Record<string, unknown>;
  clientAuthMethod: ClientAuthMethod;
  scopes: string[];
  claims: ClaimMapping;
  allowedDomains: string[];
  createUsers: boolean;
  trustEmail: boolean;
  assumeEmailVerified: boolean;
  /** Whether this provider's groups count for policies, the admin role and apps (off: ignored). */
  trustGroups: boolean;
  /** When set, its groups count only prefixed (`partner:staff`); left out for none. */
  groupPrefix?: string;
  pushedAuthorizationRequests: ParMode;
  authorizationParams: Record<string, string>;
  /** Only when creating; afterwards it is turned on and off with enable / disable. */
  enabled?: boolean;
}

/** `config`: from gatehouse.yaml, read-only in the console; `console`: created here. */
export type ProviderSource = 'config' | 'console';

export type DiscoveryStatus = 'pending' | 'ready' | 'unavailable';

/** A provider as `GET /api/admin/providers` lists it: never the secret or key, only whether one is set. */
export interface AdminProvider extends Omit<ProviderDefinition, 'clientSecret' | 'privateKey' | 'enabled' | 'groupPrefix'> {
  enabled: boolean;
  groupPrefix: string | null;
  source: ProviderSource;
  discovery: { status: DiscoveryStatus; error: string | null; checkedAt: string | null };
  /** What to register at the IdP as the redirect URI. */
  redirectUri: string;
  backchannelLogoutUri: string;
  hasClientSecret: boolean;
  hasPrivateKey: boolean;
  /** How many identities are linked to it (a provider in use cannot be deleted). */
  linkedIdentities: number;
}

/** `GET /api/admin/providers` → `{ providers: AdminProvider[] }`. */
export async function getAdminProviders({ signal }: { signal?: AbortSignal } = {}): Promise<AdminProvider[]> {
  const body = await apiClient.get<{ providers?: AdminProvider[] }>(apiPaths.admin.providers, signal ? { signal } : {});
  return Array.isArray(body?.providers) ? body.providers : [];
}

export const adminProvidersQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.providers,
    queryFn: ({ signal }) => getAdminProviders({ signal }),
  });

export function useAdminProviders() {
  return useQuery(adminProvidersQueryOptions());
}
