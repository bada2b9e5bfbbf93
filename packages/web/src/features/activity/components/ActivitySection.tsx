import type { ActivityEvent } from '@gatehouse/contract';
import { Box, Card, Group, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconActivity, IconLink, IconLock, IconLogin2, IconLogout, IconPlugConnectedX, IconUnlink } from '@tabler/icons-react';
import { useId, useState, type ReactNode } from 'react';
import { DateTime } from '../../../components/DateTime';
import { Pager } from '../../../components/Pager';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { isUnauthenticated } from '../../../lib/apiClient';
import { formatRelativeTime } from '../../../lib/formatRelativeTime';
import { ACTIVITY_PAGE_SIZE, useActivity } from '../api/getActivity';
import { describeActivity, type ActivityKind } from '../utils/describeActivity';

const KIND_ICONS: Record<ActivityKind, typeof IconActivity> = {
  'sign-in': IconLogin2,
  'sign-out': IconLogout,
  revoke: IconPlugConnectedX,
  link: IconLink,
  unlink: IconUnlink,
  denied: IconLock,
  other: IconActivity,
};

function ActivityItem({ event }: { event: ActivityEvent }) {
  const { title, detail, origin, kind, failed } = describeActivity(event);
  const Icon = KIND_ICONS[kind];
  return (
    <Group component="li" gap="sm" wrap="nowrap" align="flex-start" data-type={event.type}>
      <ThemeIcon variant="light" color={failed ? 'red' : 'gray'} size="lg" radius="xl" aria-hidden>
        <Icon size={18} />
      </ThemeIcon>
      <Stack gap={2} miw={0}>
        {/* The server's sentence says a failure in words ("… failed", "Denied access to …"): colour is not the only sign. */}
        <Text size="sm" fw={600}>
          {title}
        </Text>
        {detail && <Text size="sm">{detail}</Text>}
        <Text size="xs" c="dimmed">
          {/* "5 minutes ago · 12 Mar 2026, 14:05"; only the date once it is more than a month old. */}
          {formatRelativeTime(event.time) && (
            <>
              <DateTime value={event.time} relative />
              {' · '}
            </>
          )}
          <DateTime value={event.time} />
          {origin ? ` · from ${origin}` : ''}
        </Text>
      </Stack>
    </Group>
  );
}

/** The account page's "Recent activity": the latest sign-ins, sign-outs and account changes. */
export function ActivitySection() {
  const headingId = useId();
  const [page, setPage] = useState(1);
  const activity = useActivity(page);

  let content: ReactNode;
  if (activity.isPending || isUnauthenticated(activity.error)) {
    content = (
      <Stack gap="md" role="status" aria-label="Loading recent activity">
        <Skeleton height={40} />
        <Skeleton height={40} />
        <Skeleton height={40} />
      </Stack>
    );
  } else if (activity.isError) {
    content = <ProblemAlert title="We couldn't load your recent activity" error={activity.error} onRetry={() => void activity.refetch()} />;
  } else if (activity.data.events.length === 0) {
    content = (
      <Text size="sm" c="dimmed">
        Nothing has happened on your account yet.
      </Text>
    );
  } else {
    content = (
      <>
        <Box component="ol" m={0} p={0} style={{ listStyle: 'none', display: 'flex', flexDirection: 'column', gap: 'var(--mantine-spacing-md)' }}>
          {activity.data.events.map((event) => (
            <ActivityItem key={event.id} event={event} />
          ))}
        </Box>
        <Pager page={page} pageSize={ACTIVITY_PAGE_SIZE} total={activity.data.total} onChange={setPage} noun="events" one="event" />
      </>
    );
  }

  return (
    <Card component="section" aria-labelledby={headingId} withBorder radius="md" padding="lg">
      <Stack gap="md">
        <Stack gap={4}>
          <Title order={2} size="h3" id={headingId}>
            Recent activity
          </Title>
          <Text size="sm" c="dimmed">
            The latest sign-ins and changes to your account, newest first.
          </Text>
        </Stack>
        {content}
      </Stack>
    </Card>
  );
}
