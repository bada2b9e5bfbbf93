import { pages } from '@gatehouse/contract';
import { Alert, Anchor, Group, Skeleton, Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { Link, useParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { adminProvidersQueryOptions, useAdminProviders } from '../../features/adminProviders/api/getAdminProviders';
import { providerTestQueryOptions, useProviderTest } from '../../features/adminProviders/api/getProviderTest';
import { BackToProviders } from '../../features/adminProviders/components/BackToProviders';
import { TestResultCard } from '../../features/adminProviders/components/TestResultCard';
import { TestSignInButton } from '../../features/adminProviders/components/TestSignInButton';
import { isApiError, isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request, params }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    if (params.providerId && params.testId) void queryClient.prefetchQuery(providerTestQueryOptions(params.providerId, params.testId));
    void queryClient.prefetchQuery(adminProvidersQueryOptions());
    return null;
  };

/** `/admin/providers/:providerId/tests/:testId`: where a test sign-in ends: what the provider sent, and what Gatehouse would decide. */
export default function AdminProviderTestRoute() {
  const { providerId = '', testId = '' } = useParams();
  const test = useProviderTest(providerId, testId);
  const providers = useAdminProviders();
  // "Test again" and the way back only for a provider that exists: never a link to a page that is a 404.
  const provider = providers.data?.find((candidate) => candidate.id === providerId);
  const name = provider?.name ?? test.data?.provider.name ?? providerId;

  return (
    <Stack gap="lg">
      <PageTitle title={`Test sign-in with ${name}`} />
      <BackToProviders />
      <Title order={1}>Test sign-in with {name}</Title>
      {test.isPending || isUnauthenticated(test.error) ? (
        <Stack gap="md" role="status" aria-label="Loading the test result">
          <Skeleton height={160} radius="md" />
        </Stack>
      ) : test.isError ? (
        isApiError(test.error) && test.error.status === 404 ? (
          <Alert color="gray" title="There is no such test result">
            Start a test sign-in from the provider&apos;s page.
          </Alert>
        ) : (
          <ProblemAlert title="We couldn't load the test result" error={test.error} onRetry={isForbidden(test.error) ? undefined : () => void test.refetch()} />
        )
      ) : (
        <TestResultCard result={test.data} />
      )}
      {provider ? (
        <Group gap="md">
          <TestSignInButton providerId={providerId} label="Test again" />
          <Anchor component={Link} to={pages.adminProvider.href(providerId)} size="sm" fw={600}>
            Back to {name}
          </Anchor>
        </Group>
      ) : (
        providers.isSuccess && (
          <Alert color="gray" title={`There is no provider “${providerId}”`}>
            It may have been deleted. Pick one from{' '}
            <Anchor component={Link} to={pages.adminProviders.href()}>
              all providers
            </Anchor>
            .
          </Alert>
        )
      )}
    </Stack>
  );
}
