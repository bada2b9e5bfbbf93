import { pages } from '@gatehouse/contract';
import { Skeleton, Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useParams, type LoaderFunctionArgs } from 'react-router';
import { BackLink } from '../../components/BackLink';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { AuditTrailSection } from '../../features/audit/components/AuditTrailSection';
import { useSession } from '../../features/auth/api/getSession';
import { userQueryOptions, useUser } from '../../features/users/api/getUser';
import { UserAccessSection } from '../../features/users/components/UserAccessSection';
import { UserIdentitiesSection } from '../../features/users/components/UserIdentitiesSection';
import { UserHeader, UserProfileSection } from '../../features/users/components/UserProfile';
import { UserSessionsSection } from '../../features/users/components/UserSessionsSection';
import { UserAppsSection } from '../../features/users/components/UserAppsSection';
import { userGrantsQueryOptions } from '../../features/users/api/getUserGrants';
import { isApiError, isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request, params }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    if (params.userId) {
      void queryClient.prefetchQuery(userQueryOptions(params.userId));
      void queryClient.prefetchQuery(userGrantsQueryOptions(params.userId));
    }
    return null;
  };

function BackToUsers() {
  return <BackLink to={pages.adminUsers.href()}>All users</BackLink>;
}

/** `/admin/users/:userId`: one user's profile, access (suspend, admin role), identities, sessions and audit trail. */
export default function AdminUserRoute() {
  const { userId = '' } = useParams();
  const detail = useUser(userId);
  const session = useSession();

  if (detail.isPending || isUnauthenticated(detail.error)) {
    return (
      <Stack gap="lg">
        <PageTitle title="User" />
        <BackToUsers />
        <Stack gap="lg" role="status" aria-label="Loading the user">
          <Skeleton height={36} width="50%" />
          <Skeleton height={200} radius="md" />
          <Skeleton height={160} radius="md" />
        </Stack>
      </Stack>
    );
  }

  if (detail.isError) {
    const notFound = isApiError(detail.error) && detail.error.status === 404;
    return (
      <Stack gap="lg">
        <PageTitle title={notFound ? 'User not found' : 'User'} />
        <BackToUsers />
        <Title order={1}>{notFound ? 'User not found' : 'User'}</Title>
        <ProblemAlert
          title={notFound ? 'There is no user with this id' : "We couldn't load this user"}
          error={detail.error}
          onRetry={notFound || isForbidden(detail.error) ? undefined : () => void detail.refetch()}
        />
      </Stack>
    );
  }

  const { user, identities, sessions, events } = detail.data;
  const isSelf = session.data?.user.id === user.id;
  return (
    <Stack gap="lg">
      <PageTitle title={user.email} />
      <BackToUsers />
      <UserHeader user={user} />
      <UserProfileSection user={user} />
      <UserAccessSection user={user} isSelf={isSelf} />
      <UserSessionsSection sessions={sessions} currentSessionId={isSelf ? session.data?.session.id : undefined} />
      <UserAppsSection userId={user.id} />
      <UserIdentitiesSection identities={identities} />
      <AuditTrailSection events={events} userId={user.id} email={user.email} />
    </Stack>
  );
}
