import { pages } from '@gatehouse/contract';
import { Button, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { PageTitle } from '../../components/PageTitle';

/** Any client route the app does not know. (The server answers unknown non-app paths with a real 404.) */
export default function NotFoundRoute() {
  return (
    <Stack align="center" ta="center" gap="md" maw={480} mx="auto" mt="xl">
      <PageTitle title="Page not found" />
      <Text fw={700} fz={48} c="dimmed" aria-hidden>
        404
      </Text>
      <Title order={1}>Page not found</Title>
      <Text c="dimmed">There is nothing at this address.</Text>
      <Button component={Link} to={pages.home.href()} variant="default">
        Go to the home page
      </Button>
    </Stack>
  );
}
