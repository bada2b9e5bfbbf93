import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths, withQuery } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** The periods the dashboard covers: 24 hourly buckets, or 7 daily ones. */
export type DashboardRange = '24h' | '7d';

export interface DashboardCounts {
  signIns: number;
  failures: number;
  denials: number;
}

export interface DashboardBucket extends DashboardCounts {
  /** ISO 8601: where the hour or day begins. */
  start: string;
}

export interface DeniedApp {
  app: { id: string; name: string };
  denials: number;
}

/** `GET /api/admin/dashboard?range=` */
export interface Dashboard {
  range: DashboardRange;
  /** Oldest first. */
  buckets: DashboardBucket[];
  totals: DashboardCounts;
  /** Sessions active now. */
  liveSessions: number;
  /** Users in all (any status). */
  users: number;
  /** Most denied first. */
  topDeniedApps: DeniedApp[];
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** `GET /api/admin/dashboard`: sign-ins, failures and denials over the range, and what is live now. */
export async function getDashboard(range: DashboardRange, { signal }: { signal?: AbortSignal } = {}): Promise<Dashboard> {
  const body = await apiClient.get<Partial<Dashboard>>(withQuery(apiPaths.admin.dashboard, { range }), signal ? { signal } : {});
  const totals = body?.totals;
  return {
    range: body?.range === '7d' || body?.range === '24h' ? body.range : range,
    buckets: Array.isArray(body?.buckets) ? body.buckets : [],
    totals: { signIns: count(totals?.signIns), failures: count(totals?.failures), denials: count(totals?.denials) },
    liveSessions: count(body?.liveSessions),
    users: count(body?.users),
    topDeniedApps: Array.isArray(body?.topDeniedApps) ? body.topDeniedApps : [],
  };
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
