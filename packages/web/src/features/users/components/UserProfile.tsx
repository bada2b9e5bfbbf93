import type { AdminUser } from '@gatehouse/contract';
import { Avatar, Code, DataList, Group, Stack, Text, Title } from '@mantine/core';
import { DateTime } from '../../../components/DateTime';
import { Section } from '../../../components/Section';
import { AdminBadge, StatusBadge } from './UserBadges';

/** The top of a user's page: who it is (the page's h1), their email, status and role. */
export function UserHeader({ user }: { user: AdminUser }) {
  const displayName = user.name || user.email;
  return (
    <Group wrap="nowrap" align="center" gap="md">
      <Avatar name={displayName} color="initials" size={64} radius="xl" alt="" aria-hidden />
      <Stack gap={4} miw={0}>
        <Title order={1} style={{ overflowWrap: 'anywhere' }}>
          {displayName}
        </Title>
        {user.name && (
          <Text c="dimmed" style={{ overflowWrap: 'anywhere' }}>
            {user.email}
          </Text>
        )}
        <Group gap={6}>
          <StatusBadge status={user.status} />
          <AdminBadge user={user} />
        </Group>
      </Stack>
    </Group>
  );
}

/** The user's record: email, name, id, when they joined and last signed in. */
export function UserProfileSection({ user }: { user: AdminUser }) {
  return (
    <Section title="Profile">
      <DataList withDivider labelWidth={150}>
        <DataList.Item>
          <DataList.ItemLabel>Email</DataList.ItemLabel>
          <DataList.ItemValue style={{ overflowWrap: 'anywhere' }}>{user.email}</DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>Name</DataList.ItemLabel>
          <DataList.ItemValue>{user.name || 'Not given'}</DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>User ID</DataList.ItemLabel>
          <DataList.ItemValue>
            <Code style={{ overflowWrap: 'anywhere' }}>{user.id}</Code>
          </DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>Created</DataList.ItemLabel>
          <DataList.ItemValue>
            <DateTime value={user.createdAt} />
          </DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>Last sign-in</DataList.ItemLabel>
          <DataList.ItemValue>{user.lastSignInAt ? <DateTime value={user.lastSignInAt} /> : 'Never'}</DataList.ItemValue>
        </DataList.Item>
      </DataList>
    </Section>
  );
}
