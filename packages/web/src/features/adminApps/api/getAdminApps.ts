import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** One rule of a policy: exactly one of these shapes. */
export type PolicyRule =
  | { anyUser: true }
  | { emails: string[] }
  | { domains: string[] }
  | { groups: string[] }
  | { roles: string[] }
  | { claim: { name: string; value: string } };

export interface Policy {
  allow: PolicyRule[];
  deny: PolicyRule[];
}

/** An app definition as the console sends it (POST, PUT). */
export interface AppDefinition {
  id: string;
  name: string;
  /** The origin people open, e.g. `https://wiki.example.com`. */
  publicUrl: string;
  /** Where allowed requests are forwarded. */
  upstream: string;
  policy: Policy;
  /** Paths reachable without signing in. */
  publicPaths: string[];
  websockets: boolean;
  corsPreflight: boolean;
  preserveHost: boolean;
  passAccessToken: boolean;
}

/** `config`: from gatehouse.yaml, read-only in the console; `console`: created here. */
export type AppSource = 'config' | 'console';

export interface AdminApp extends AppDefinition {
  source: AppSource;
}

/** `GET /api/admin/apps` → `{ apps: AdminApp[] }`. */
export async function getAdminApps({ signal }: { signal?: AbortSignal } = {}): Promise<AdminApp[]> {
  const body = await apiClient.get<{ apps?: AdminApp[] }>(apiPaths.admin.apps, signal ? { signal } : {});
  return Array.isArray(body?.apps) ? body.apps : [];
}

export const adminAppsQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.apps,
    queryFn: ({ signal }) => getAdminApps({ signal }),
  });

export function useAdminApps() {
  return useQuery(adminAppsQueryOptions());
}
