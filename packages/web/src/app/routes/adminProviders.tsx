import { pages } from '@gatehouse/contract';
import { Button, Stack } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { Link, type LoaderFunctionArgs } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { TableSkeleton } from '../../components/TableSkeleton';
import { adminProvidersQueryOptions, useAdminProviders } from '../../features/adminProviders/api/getAdminProviders';
import { signInSettingsQueryOptions } from '../../features/adminProviders/api/getSignInSettings';
import { ProvidersTable } from '../../features/adminProviders/components/ProvidersTable';
import { ReloadConfigCard } from '../../features/adminProviders/components/ReloadConfigCard';
import { SignInSettingsCard } from '../../features/adminProviders/components/SignInSettingsCard';
import { isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { useConfigBadge } from '../../features/config/api/getConfigState';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminProvidersQueryOptions());
    void queryClient.prefetchQuery(signInSettingsQueryOptions());
    return null;
  };

/** `/admin/providers`: the identity providers people sign in with, and who may sign in at all. */
export default function AdminProvidersRoute() {
  const providers = useAdminProviders();
  const configBadge = useConfigBadge();
  return (
    <Stack gap="lg">
      <PageTitle title="Providers" />
      <PageHeader
        title="Providers"
        description="The identity providers people sign in with. Providers from the configuration are shown read-only; change them in its file, then reload it."
        actions={
          <Button component={Link} to={pages.adminProviderNew.href()} leftSection={<IconPlus size={16} aria-hidden />}>
            New provider
          </Button>
        }
      />
      <ReloadConfigCard />
      {providers.isPending || isUnauthenticated(providers.error) ? (
        <TableSkeleton label="Loading providers" />
      ) : providers.isError ? (
        <ProblemAlert
          title="We couldn't load the providers"
          error={providers.error}
          onRetry={isForbidden(providers.error) ? undefined : () => void providers.refetch()}
        />
      ) : (
        <ProvidersTable providers={providers.data} configLabel={configBadge} />
      )}
      <SignInSettingsCard />
    </Stack>
  );
}
