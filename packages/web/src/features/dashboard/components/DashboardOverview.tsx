import { pages, withQuery, type DashboardRange } from '@gatehouse/contract';
import { Anchor, Grid, Skeleton, Stack } from '@mantine/core';
import { Link } from 'react-router';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { useDashboard } from '../api/getDashboard';
import { rangePeriod } from '../utils/dashboardRange';
import { ActivityChart } from './ActivityChart';
import { StatCards, StatCardsSkeleton } from './StatCards';
import { TopDeniedApps } from './TopDeniedApps';

/** The dashboard below its range switch: headline numbers, activity over time, the most denied apps. */
export function DashboardOverview({ range }: { range: DashboardRange }) {
  const dashboard = useDashboard(range);

  if (dashboard.isPending || isUnauthenticated(dashboard.error)) {
    return (
      <Stack gap="lg" role="status" aria-label="Loading the dashboard">
        <StatCardsSkeleton />
        <Skeleton height={360} radius="md" />
      </Stack>
    );
  }
  if (dashboard.isError) {
    return (
      <ProblemAlert
        title="We couldn't load the dashboard"
        error={dashboard.error}
        onRetry={isForbidden(dashboard.error) ? undefined : () => void dashboard.refetch()}
      />
    );
  }

  const data = dashboard.data;
  const period = rangePeriod(data.range);
  return (
    // While another range loads, the previous numbers stay, dimmed and marked busy.
    <Stack gap="lg" aria-busy={dashboard.isPlaceholderData} style={{ opacity: dashboard.isPlaceholderData ? 0.6 : 1, transition: 'opacity 150ms' }}>
      <StatCards dashboard={data} />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <Section title="Sign-in activity" description={`Per ${data.range === '24h' ? 'hour' : 'day'}, over ${period}.`}>
            <ActivityChart dashboard={data} />
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 4 }}>
          <Section
            title="Top denied apps"
            description={`Where access was refused most often in ${period}.`}
          >
            <TopDeniedApps apps={data.topDeniedApps} period={period} />
            <Anchor component={Link} to={withQuery(pages.adminAudit.href(), { type: 'access_denied' })} size="sm">
              Denials in the audit log
            </Anchor>
          </Section>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}
