import { Box, Paper, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useSearchParams } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { useProviders } from '../../features/auth/api/getProviders';
import { useSession } from '../../features/auth/api/getSession';
import { ProviderButtons } from '../../features/auth/components/ProviderButtons';
import { SignedInNotice } from '../../features/auth/components/SignedInNotice';
import { SignInErrorAlert } from '../../features/auth/components/SignInErrorAlert';
import { providersToOffer, readSignInFailure } from '../../features/auth/utils/signInErrors';

/**
 * `/sign-in[?rd=<path or app URL>][&error=<code>&ref=<reference>]`: one button per enabled provider, the
 * banner a failed attempt ends on, and a way onward for someone who is signed in already. `rd` is a path
 * here, or the absolute URL of a protected app that sent the person to sign in; the page never uses it
 * as given, only the server's verdict on it (`returnTo` in `GET /api/providers?rd=`).
 */
export default function SignInRoute() {
  const [search] = useSearchParams();
  const failure = readSignInFailure(search);
  const providers = useProviders(search.get('rd'));
  // 401 is the expected answer here; it only decides whether to show "You are signed in as …".
  const session = useSession();

  return (
    <Box maw={460} mx="auto" mt={{ base: 0, sm: 'xl' }}>
      <PageTitle title="Sign in" />
      <Paper withBorder radius="md" p={{ base: 'lg', sm: 'xl' }} shadow="sm">
        <Stack gap="lg">
          <Stack gap={4}>
            {providers.data ? (
              <Text fw={600} c="dimmed" data-testid="organization-name">
                {providers.data.organization.name}
              </Text>
            ) : providers.isPending ? (
              <Skeleton height={20} width="40%" />
            ) : null}
            <Title order={1}>Sign in</Title>
            <Text c="dimmed" size="sm">
              Use your organisation&apos;s account to continue.
            </Text>
          </Stack>

          {failure && <SignInErrorAlert failure={failure} providers={providers.data?.providers} />}
          {session.data && providers.data && <SignedInNotice current={session.data} returnTo={providers.data.returnTo} />}

          {providers.isPending ? (
            <Stack gap="sm" role="status" aria-label="Loading sign-in options">
              <Skeleton height={42} />
            </Stack>
          ) : providers.isError ? (
            <ProblemAlert
              title="We couldn't load the sign-in options"
              error={providers.error}
              onRetry={() => void providers.refetch()}
            />
          ) : (
            <ProviderButtons providers={providersToOffer(providers.data.providers, failure)} returnTo={providers.data.returnTo.href} />
          )}
        </Stack>
      </Paper>
    </Box>
  );
}
