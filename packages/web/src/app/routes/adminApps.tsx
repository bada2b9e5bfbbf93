import { pages } from '@gatehouse/contract';
import { Button, Stack } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { Link, type LoaderFunctionArgs } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { TableSkeleton } from '../../components/TableSkeleton';
import { adminAppsQueryOptions, useAdminApps } from '../../features/adminApps/api/getAdminApps';
import { AppsTable } from '../../features/adminApps/components/AppsTable';
import { isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { useConfigBadge } from '../../features/config/api/getConfigState';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminAppsQueryOptions());
    return null;
  };

/** `/admin/apps`: every protected app, where it lives and who may open it. */
export default function AdminAppsRoute() {
  const apps = useAdminApps();
  const configBadge = useConfigBadge();
  return (
    <Stack gap="lg">
      <PageTitle title="Apps" />
      <PageHeader
        title="Apps"
        description="The apps Gatehouse protects. Apps from the configuration are shown read-only; change them there."
        actions={
          <Button component={Link} to={pages.adminAppNew.href()} leftSection={<IconPlus size={16} aria-hidden />}>
            New app
          </Button>
        }
      />
      {apps.isPending || isUnauthenticated(apps.error) ? (
        <TableSkeleton label="Loading apps" />
      ) : apps.isError ? (
        <ProblemAlert
          title="We couldn't load the apps"
          error={apps.error}
          onRetry={isForbidden(apps.error) ? undefined : () => void apps.refetch()}
        />
      ) : (
        <AppsTable apps={apps.data} configLabel={configBadge} />
      )}
    </Stack>
  );
}
