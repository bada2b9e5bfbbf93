import { Card, Group, Stack, Text, Title } from '@mantine/core';
import { useId, type ReactNode, type Ref } from 'react';

export interface SectionProps {
  title: string;
  /** One sentence under the title. */
  description?: ReactNode;
  /** Buttons or links beside the title. */
  actions?: ReactNode;
  /** Lets the caller move focus to the heading (after the focused row went away). */
  headingRef?: Ref<HTMLHeadingElement>;
  children: ReactNode;
  [data: `data-${string}`]: string | undefined;
}

/**
 * A titled card that is a landmark of its own (`<section aria-labelledby>`), as the account page's
 * sections are: an h2, an optional sentence and actions, then the content.
 */
export function Section({ title, description, actions, headingRef, children, ...data }: SectionProps) {
  const headingId = useId();
  return (
    <Card component="section" aria-labelledby={headingId} withBorder radius="md" padding="lg" {...data}>
      <Stack gap="md">
        <Group justify="space-between" align="flex-start" gap="sm">
          <Stack gap={4} miw={0} style={{ flex: '1 1 240px' }}>
            <Title order={2} size="h3" id={headingId} ref={headingRef} tabIndex={headingRef ? -1 : undefined} style={{ outline: 'none' }}>
              {title}
            </Title>
            {description && (
              <Text size="sm" c="dimmed">
                {description}
              </Text>
            )}
          </Stack>
          {actions && <Group gap="sm">{actions}</Group>}
        </Group>
        {children}
      </Stack>
    </Card>
  );
}
