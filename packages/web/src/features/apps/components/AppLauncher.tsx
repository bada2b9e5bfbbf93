import { Avatar, Card, EmptyState, Group, SimpleGrid, Skeleton, Stack, Text, Title } from '@mantine/core';
import { IconApps, IconArrowUpRight } from '@tabler/icons-react';
import { useId, type ReactNode } from 'react';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { isUnauthenticated } from '../../../lib/apiClient';
import { useApps } from '../api/getApps';
import { toAppLink, type AppLink } from '../utils/appLink';
import classes from './AppLauncher.module.css';
import { avatarColor } from '../../../lib/avatarColor';
import { BreakableUrl } from '../../../components/BreakableUrl';

/** One app: its initials, its name (the link, and so the card's accessible name) and its host. */
function AppCard({ app }: { app: AppLink }) {
  return (
    <Card withBorder radius="md" padding="md" className={classes.card} data-app={app.id}>
      <Group wrap="nowrap" gap="sm" align="center">
        <Avatar name={app.name} color={avatarColor(app.name)} variant="filled" radius="md" size="md" alt="" aria-hidden />
        <Stack gap={0} miw={0} style={{ flex: 1 }}>
          <Text fw={600}>
            {/* A full page load to the app's own host, which Gatehouse guards. */}
            <a href={app.href} className={classes.link}>
              {app.name}
            </a>
          </Text>
          <Text size="xs" c="dimmed" className={classes.host}>
            <BreakableUrl value={app.host} />
          </Text>
        </Stack>
        <IconArrowUpRight size={18} aria-hidden className={classes.arrow} />
      </Group>
    </Card>
  );
}

function LauncherSkeleton() {
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, sm: 3 }} spacing="md" role="status" aria-label="Loading your apps">
      <Skeleton height={74} radius="md" />
      <Skeleton height={74} radius="md" />
      <Skeleton height={74} radius="md" />
    </SimpleGrid>
  );
}

/** The home page's list of the apps this person may open, each a link to the app at its own host. */
export function AppLauncher() {
  const headingId = useId();
  const apps = useApps();

  let content: ReactNode;
  if (apps.isPending || isUnauthenticated(apps.error)) {
    // A 401 is handled by the page (it goes to sign in); until then, nothing to show.
    content = <LauncherSkeleton />;
  } else if (apps.isError) {
    content = <ProblemAlert title="We couldn't load your apps" error={apps.error} onRetry={() => void apps.refetch()} />;
  } else {
    const links = apps.data.apps.map(toAppLink).filter((link): link is AppLink => link !== undefined);
    content =
      links.length === 0 ? (
        <EmptyState
          icon={<IconApps aria-hidden />}
          withIndicatorBackground
          title="No apps are available to you yet."
          description="When your administrator gives you access to an app, it appears here."
          py="xl"
        />
      ) : (
        <SimpleGrid component="ul" cols={{ base: 1, xs: 2, sm: 3 }} spacing="md" className={classes.grid} aria-labelledby={headingId}>
          {links.map((link) => (
            <li key={link.id}>
              <AppCard app={link} />
            </li>
          ))}
        </SimpleGrid>
      );
  }

  return (
    <section aria-labelledby={headingId}>
      <Title order={2} size="h3" id={headingId} mb="md">
        Your apps
      </Title>
      {content}
    </section>
  );
}
