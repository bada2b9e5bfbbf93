import { Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import classes from './PageHeader.module.css';

export interface PageHeaderProps {
  title: ReactNode;
  /** One sentence under the title. */
  description?: ReactNode;
  /** The page's own buttons ("New app", "Export CSV"), on the title's line. */
  actions?: ReactNode;
}

/**
 * The top of a console page: its h1 and a sentence, and its buttons on the h1's line (centred on it,
 * whatever the title's size), below the words where the screen is too narrow for both.
 */
export function PageHeader({ title, description, actions }: PageHeaderProps) {
  return (
    <Group justify="space-between" align="flex-start" gap="sm" className={classes.header}>
      <Stack gap={4} miw={0} className={classes.words}>
        <Title order={1}>{title}</Title>
        {description && (
          <Text c="dimmed" size="sm">
            {description}
          </Text>
        )}
      </Stack>
      {actions && (
        <Group gap="sm" className={classes.actions}>
          {actions}
        </Group>
      )}
    </Group>
  );
}
