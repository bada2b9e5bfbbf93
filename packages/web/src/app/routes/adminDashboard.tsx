import { Stack } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useSearchParams, type LoaderFunctionArgs } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { PageTitle } from '../../components/PageTitle';
import { dashboardQueryOptions } from '../../features/dashboard/api/getDashboard';
import { DashboardOverview } from '../../features/dashboard/components/DashboardOverview';
import { RangeControl } from '../../features/dashboard/components/RangeControl';
import { DEFAULT_RANGE, parseRange } from '../../features/dashboard/utils/dashboardRange';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(dashboardQueryOptions(parseRange(new URL(request.url).searchParams.get('range'))));
    return null;
  };

/** `/admin[?range=24h|7d]`: sign-ins, failures and denials over time, live sessions, the most denied apps. */
export default function AdminDashboardRoute() {
  const [search, setSearch] = useSearchParams();
  const range = parseRange(search.get('range'));
  return (
    <Stack gap="lg">
      <PageTitle title="Admin dashboard" />
      <PageHeader
        title="Dashboard"
        description="How people are signing in, and where they are turned away."
        actions={
          <RangeControl
            value={range}
            onChange={(next) => setSearch(next === DEFAULT_RANGE ? {} : { range: next }, { replace: true, preventScrollReset: true })}
          />
        }
      />
      <DashboardOverview range={range} />
    </Stack>
  );
}
