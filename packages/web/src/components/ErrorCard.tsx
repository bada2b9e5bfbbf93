import { Card, Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { PageTitle } from './PageTitle';

export interface ErrorCardProps {
  title: string;
  /** What happened, in a sentence or two (or an alert with the server's problem). */
  children: ReactNode;
  /** The ways on ("Back to your apps", "Sign out"), the first the main one. */
  actions: ReactNode;
  /** The server's reference id, when there is one. */
  reference?: string | undefined;
}

/**
 * The one design of every error page in the front end (not found, not allowed, a page that failed),
 * as the server's own error pages look: one card, its title, what happened, the ways on, a reference.
 */
export function ErrorCard({ title, children, actions, reference }: ErrorCardProps) {
  return (
    <Card withBorder radius="md" padding="xl" maw={560} mx="auto" mt="md">
      <PageTitle title={title} />
      <Stack gap="md">
        <Title order={1} size="h2">
          {title}
        </Title>
        {children}
        <Group gap="sm">{actions}</Group>
        {reference && (
          <Text size="sm" c="dimmed">
            Reference <code>{reference}</code>
          </Text>
        )}
      </Stack>
    </Card>
  );
}
