import { pages } from '@gatehouse/contract';
import { Anchor, Group, Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { Link, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { appsQueryOptions } from '../../features/apps/api/getApps';
import { AppLauncher } from '../../features/apps/components/AppLauncher';
import { RequireSession } from '../RequireSession';
import { ensureSession } from '../ensureSession';

/** The launcher is the front door: a signed-out visitor goes to the sign-in page, with no return-to. */
const signInHref = () => pages.signIn.href();

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request, signInHref);
    // Start loading the apps before the page renders, as the account page does with its sections.
    void queryClient.prefetchQuery(appsQueryOptions());
    return null;
  };

/** `/`: the app launcher, the apps this person may open. */
export default function HomeRoute() {
  return (
    <Stack gap="xl">
      <PageTitle title="Apps" />
      <RequireSession signedOutHref={signInHref}>
        {({ user }) => (
          <>
            <Group justify="space-between" align="baseline">
              <Title order={1}>Welcome, {user.name || user.email}</Title>
              <Anchor component={Link} to={pages.account.href()} fw={600}>
                Your account
              </Anchor>
            </Group>
            <AppLauncher />
          </>
        )}
      </RequireSession>
    </Stack>
  );
}
