import { routes, type ConfigState } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import { configSourceLabel } from '../utils/configSource';

/** `GET /api/admin/config`: the configuration file's path as the server read it (null: built-in defaults). */
export async function getConfigState({ signal }: { signal?: AbortSignal } = {}): Promise<ConfigState> {
  const { config } = await callApi(routes.admin.getConfig, { signal });
  return config;
}

export const configStateQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.config,
    queryFn: ({ signal }) => getConfigState({ signal }),
    // It changes only with a reload, which invalidates every admin query.
    staleTime: 60_000,
  });

export function useConfigState() {
  return useQuery(configStateQueryOptions());
}

/** The badge's words for items from the configuration ("From gatehouse.yaml"), while loading a plain one. */
export function useConfigBadge(): string {
  const config = useConfigState();
  return config.isSuccess ? configSourceLabel(config.data.file).badge : 'From the configuration';
}
