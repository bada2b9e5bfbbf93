import { EmptyState, Title } from '@mantine/core';
import { IconApps } from '@tabler/icons-react';
import { useId } from 'react';

/**
 * The home page's list of apps this person may open. The apps API comes in a later issue; until then
 * the launcher is an honest empty state.
 */
export function AppLauncher() {
  const headingId = useId();
  return (
    <section aria-labelledby={headingId}>
      <Title order={2} size="h3" id={headingId} mb="md">
        Your apps
      </Title>
      <EmptyState
        icon={<IconApps aria-hidden />}
        withIndicatorBackground
        title="No apps are available to you yet."
        description="When your administrator gives you access to an app, it appears here."
        py="xl"
      />
    </section>
  );
}
