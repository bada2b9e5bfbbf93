import { routes, type Dashboard, type DashboardRange } from '@gatehouse/contract';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** One of the apps most often denied, with its count. */
export type DeniedApp = Dashboard['topDeniedApps'][number];

/** `GET /api/admin/dashboard?range=`: sign-ins, failures and denials over the range, and what is live now. */
export function getDashboard(range: DashboardRange, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.getDashboard, { query: { range }, signal });
}

export const dashboardQueryOptions = (range: DashboardRange) =>
  queryOptions({
    queryKey: adminQueryKeys.dashboard(range),
    queryFn: ({ signal }) => getDashboard(range, { signal }),
    // Switching the range keeps the other range's numbers on screen (marked busy) until the new ones arrive.
    placeholderData: keepPreviousData,
    // "Live sessions" should stay roughly live while the dashboard is open.
    refetchInterval: 60_000,
  });

export function useDashboard(range: DashboardRange) {
  return useQuery(dashboardQueryOptions(range));
}
