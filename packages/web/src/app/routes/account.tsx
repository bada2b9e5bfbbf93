import { Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import type { LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProfileSection } from '../../features/account/components/ProfileSection';
import { SignOutButton } from '../../features/auth/components/SignOutButton';
import { csrfTokenQueryOptions } from '../../lib/csrf';
import { RequireSession } from '../RequireSession';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    // The sign-out form needs the token; start fetching it before the page renders.
    void queryClient.prefetchQuery(csrfTokenQueryOptions());
    return null;
  };

/**
 * `/account`: a page of sections. The profile card comes first; linked identities, sessions and recent
 * activity are further sections in later issues, each its own component with its own queries.
 */
export default function AccountRoute() {
  return (
    <Stack gap="lg">
      <PageTitle title="Your account" />
      <Title order={1}>Your account</Title>
      <RequireSession>{(current) => <ProfileSection current={current} actions={<SignOutButton />} />}</RequireSession>
    </Stack>
  );
}
