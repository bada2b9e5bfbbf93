import { Group, Progress, Stack, Text } from '@mantine/core';
import type { DeniedApp } from '../api/getDashboard';

/** The apps people were most often turned away from, with a bar for each relative to the first. */
export function TopDeniedApps({ apps, period }: { apps: DeniedApp[]; period: string }) {
  if (apps.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        Nobody was denied access to an app in {period}.
      </Text>
    );
  }
  const most = Math.max(...apps.map((entry) => entry.denials), 1);
  return (
    <Stack component="ol" gap="sm" m={0} p={0} style={{ listStyle: 'none' }} aria-label="Most denied apps">
      {apps.map((entry) => (
        <li key={entry.app.id}>
          <Group justify="space-between" gap="xs" wrap="nowrap">
            <Text size="sm" fw={600} truncate>
              {entry.app.name}
            </Text>
            <Text size="sm" fw={600} style={{ whiteSpace: 'nowrap' }}>
              {entry.denials === 1 ? '1 denial' : `${entry.denials.toLocaleString()} denials`}
            </Text>
          </Group>
          <Progress value={(entry.denials / most) * 100} color="red" size="sm" mt={6} aria-hidden />
        </li>
      ))}
    </Stack>
  );
}
