import { routes } from '@gatehouse/contract';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

export interface AppGrantsQuery {
  page: number;
  pageSize: number;
}

/** `GET /api/admin/apps/{appId}/grants?page=&pageSize=`: who is signed in to the app with Gatehouse, most recently used first. */
export function getAppGrants(appId: string, query: AppGrantsQuery, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.listAppGrants, { params: { appId }, query, signal });
}

export const appGrantsQueryOptions = (appId: string, query: AppGrantsQuery) =>
  queryOptions({
    queryKey: adminQueryKeys.appGrants(appId, query),
    queryFn: ({ signal }) => getAppGrants(appId, query, { signal }),
    // People sign in and out while an admin looks: the list is read again when they come back to it.
    refetchOnWindowFocus: 'always',
    // The page being left stays on screen until the next one arrives.
    placeholderData: keepPreviousData,
  });

export function useAppGrants(appId: string, query: AppGrantsQuery) {
  return useQuery(appGrantsQueryOptions(appId, query));
}
