import { routes, type AdminProvider } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/providers`: every provider, never a credential (only whether one is set). */
export async function getAdminProviders({ signal }: { signal?: AbortSignal } = {}): Promise<AdminProvider[]> {
  const { providers } = await callApi(routes.admin.listProviders, { signal });
  return providers;
}

export const adminProvidersQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.providers,
    queryFn: ({ signal }) => getAdminProviders({ signal }),
  });

export function useAdminProviders() {
  return useQuery(adminProvidersQueryOptions());
}
