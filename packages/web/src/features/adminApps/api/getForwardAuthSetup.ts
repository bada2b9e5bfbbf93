import { routes, type ForwardAuthSetup } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/forward-auth`: where a proxy reaches Gatehouse, and which proxies it believes. */
export function getForwardAuthSetup({ signal }: { signal?: AbortSignal } = {}): Promise<ForwardAuthSetup> {
  return callApi(routes.admin.getForwardAuthSetup, { signal });
}

export const forwardAuthSetupQueryOptions = () =>
  queryOptions({
    queryKey: [...adminQueryKeys.apps, 'forward-auth'] as const,
    queryFn: ({ signal }) => getForwardAuthSetup({ signal }),
    // Fixed while Gatehouse runs (trustedProxies and the listen address take a restart).
    staleTime: Infinity,
  });

export function useForwardAuthSetup() {
  return useQuery(forwardAuthSetupQueryOptions());
}
