import { routes, type ProviderPreset } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/provider-presets`: the kinds of provider "Add provider" starts from (they change only with an upgrade). */
export async function getProviderPresets({ signal }: { signal?: AbortSignal } = {}): Promise<ProviderPreset[]> {
  const { presets } = await callApi(routes.admin.listProviderPresets, { signal });
  return presets;
}

export const providerPresetsQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.providerPresets,
    queryFn: ({ signal }) => getProviderPresets({ signal }),
    staleTime: Infinity,
  });

export function useProviderPresets() {
  return useQuery(providerPresetsQueryOptions());
}
