import { routes, type AdminApp, type OidcClientDefinitionInput } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * One rule of a policy, as the server shows it and as the editor writes it: an object with exactly one
 * kind. Roles are sent as typed; the server refuses one it does not know.
 */
export type PolicyRule = Omit<AdminApp['policy']['allow'][number], 'roles'> & { roles?: string[] };

export interface Policy {
  allow: PolicyRule[];
  deny: PolicyRule[];
}

/**
 * An app definition as the console sends it (POST, PUT): what it lists, without `source`, and its oidc
 * block as written (the client id may be left out; the view's `secretsFromConfig` is not sent).
 */
export type AppDefinition = Omit<AdminApp, 'source' | 'policy' | 'oidc'> & { policy: Policy; oidc?: OidcClientDefinitionInput };

/** `GET /api/admin/apps`: every protected app with its policy. */
export async function getAdminApps({ signal }: { signal?: AbortSignal } = {}): Promise<AdminApp[]> {
  const { apps } = await callApi(routes.admin.listApps, { signal });
  return apps;
}

export const adminAppsQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.apps,
    queryFn: ({ signal }) => getAdminApps({ signal }),
  });

export function useAdminApps() {
  return useQuery(adminAppsQueryOptions());
}
