import { pageParams } from '@gatehouse/contract';
import { Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useSearchParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProfileSection } from '../../features/account/components/ProfileSection';
import { activityQueryOptions } from '../../features/activity/api/getActivity';
import { ActivitySection } from '../../features/activity/components/ActivitySection';
import { SignOutButton } from '../../features/auth/components/SignOutButton';
import { SignOutEverywhereButton } from '../../features/auth/components/SignOutEverywhereButton';
import { identitiesQueryOptions } from '../../features/identities/api/getIdentities';
import { IdentitiesSection } from '../../features/identities/components/IdentitiesSection';
import { LinkedAlert } from '../../features/identities/components/LinkedAlert';
import { mySessionsQueryOptions } from '../../features/sessions/api/getMySessions';
import { SessionsSection } from '../../features/sessions/components/SessionsSection';
import { csrfTokenQueryOptions } from '../../lib/csrf';
import { RequireSession } from '../RequireSession';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    // Start every section's request at once, before the page renders, rather than one after another.
    // The forms (sign out, link) need the CSRF token.
    void queryClient.prefetchQuery(csrfTokenQueryOptions());
    void queryClient.prefetchQuery(mySessionsQueryOptions());
    void queryClient.prefetchQuery(identitiesQueryOptions());
    void queryClient.prefetchQuery(activityQueryOptions());
    return null;
  };

/**
 * `/account[?linked=<providerId>]`: a page of sections, each its own component with its own queries:
 * the profile card, sessions, linked identities, recent activity.
 */
export default function AccountRoute() {
  const [search, setSearch] = useSearchParams();
  const linked = search.get(pageParams.linked);
  const dismissLinked = () =>
    setSearch(
      (previous) => {
        const next = new URLSearchParams(previous);
        next.delete(pageParams.linked);
        return next;
      },
      { replace: true, preventScrollReset: true },
    );

  return (
    <Stack gap="lg">
      <PageTitle title="Your account" />
      <Title order={1}>Your account</Title>
      <RequireSession>
        {(current) => (
          <>
            {linked && <LinkedAlert providerId={linked} onClose={dismissLinked} />}
            <ProfileSection current={current} actions={<SignOutButton />} />
            <SessionsSection actions={<SignOutEverywhereButton />} />
            <IdentitiesSection />
            <ActivitySection />
          </>
        )}
      </RequireSession>
    </Stack>
  );
}
