import type { CurrentSession } from '@gatehouse/contract';
import { Avatar, Badge, Card, DataList, Group, Stack, Text, Title } from '@mantine/core';
import { useId, type ReactNode } from 'react';
import { DateTime } from '../../../components/DateTime';

export interface ProfileSectionProps {
  current: CurrentSession;
  /** Buttons for the card's footer (the account page puts "Sign out" here). */
  actions?: ReactNode;
}

/**
 * Only https pictures are shown: an IdP-supplied `http:` or `javascript:`-ish value is not worth the
 * mixed-content warning or the risk. A picture that fails to load falls back to initials.
 */
function safePicture(picture: string | null | undefined): string | null {
  if (!picture) return null;
  try {
    return new URL(picture).protocol === 'https:' ? picture : null;
  } catch {
    return null;
  }
}

/** The account page's profile card: who you are, how you signed in, and this session's lifetime. */
export function ProfileSection({ current, actions }: ProfileSectionProps) {
  const headingId = useId();
  const { user, session } = current;
  const displayName = user.name || user.email;
  return (
    <Card component="section" aria-labelledby={headingId} withBorder radius="md" padding="lg">
      <Group wrap="nowrap" align="center" gap="md">
        <Avatar src={safePicture(user.picture)} name={displayName} color="initials" size={64} radius="xl" alt="" aria-hidden />
        <Stack gap={2} miw={0}>
          <Title order={2} id={headingId} size="h3" style={{ overflowWrap: 'anywhere' }}>
            {displayName}
          </Title>
          <Text c="dimmed" style={{ overflowWrap: 'anywhere' }}>
            {user.email}
          </Text>
          <Text size="sm">Signed in with {session.provider.name}</Text>
        </Stack>
      </Group>

      <DataList mt="lg" withDivider labelWidth={150}>
        <DataList.Item>
          <DataList.ItemLabel>Groups</DataList.ItemLabel>
          <DataList.ItemValue>
            {user.groups.length > 0 ? (
              <Group gap={6}>
                {user.groups.map((group) => (
                  <Badge key={group} variant="light" tt="none">
                    {group}
                  </Badge>
                ))}
              </Group>
            ) : (
              'No groups'
            )}
          </DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>Session started</DataList.ItemLabel>
          <DataList.ItemValue>
            <DateTime value={session.createdAt} />
          </DataList.ItemValue>
        </DataList.Item>
        <DataList.Item>
          <DataList.ItemLabel>Session expires</DataList.ItemLabel>
          <DataList.ItemValue>
            <DateTime value={session.expiresAt} />
          </DataList.ItemValue>
        </DataList.Item>
      </DataList>

      {actions && (
        <Card.Section withBorder inheritPadding py="sm" mt="lg">
          <Group justify="flex-end">{actions}</Group>
        </Card.Section>
      )}
    </Card>
  );
}
