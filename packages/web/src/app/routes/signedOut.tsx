import { pages } from '@gatehouse/contract';
import { Button, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconDoorExit } from '@tabler/icons-react';
import { Link } from 'react-router';
import { PageTitle } from '../../components/PageTitle';

/** `/signed-out`: where sign-out ends, after the IdP's own logout. */
export default function SignedOutRoute() {
  return (
    <Stack align="center" ta="center" gap="md" maw={480} mx="auto" mt="xl">
      <PageTitle title="Signed out" />
      <ThemeIcon size={56} radius="xl" variant="light" aria-hidden>
        <IconDoorExit size={30} />
      </ThemeIcon>
      <Title order={1}>You are signed out</Title>
      <Text c="dimmed">Your Gatehouse session has ended. On a shared computer, close the browser as well.</Text>
      <Button component={Link} to={pages.signIn.href()} size="md">
        Sign in again
      </Button>
    </Stack>
  );
}
