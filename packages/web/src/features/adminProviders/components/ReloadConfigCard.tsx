import type { ConfigReload } from '@gatehouse/contract';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { IconCircleCheck, IconRefresh } from '@tabler/icons-react';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useReloadConfig } from '../api/reloadConfig';

/** "providers: +okta −legacy ~corp" style lines, one per kind of change; empty when nothing changed. */
function summary({ changes, sessionsEnded }: ConfigReload): string[] {
  const list = (label: string, { added, removed, changed }: { added: string[]; removed: string[]; changed?: string[] }) => {
    const parts = [...added.map((id) => `added ${id}`), ...removed.map((id) => `removed ${id}`), ...(changed ?? []).map((id) => `changed ${id}`)];
    return parts.length > 0 ? [`${label}: ${parts.join(', ')}`] : [];
  };
  return [
    ...list('Providers', changes.providers),
    ...list('Apps', changes.apps),
    ...list('Admins', changes.admins),
    ...(changes.settings.length > 0 ? [`Settings: ${changes.settings.join(', ')}`] : []),
    ...(sessionsEnded > 0 ? [`${sessionsEnded} session(s) of removed or turned-off providers ended`] : []),
  ];
}

/**
 * Reloads gatehouse.yaml without a restart, as SIGHUP does, and shows what changed or why the file was
 * refused (then nothing of it applies).
 */
export function ReloadConfigCard() {
  const reload = useReloadConfig();
  return (
    <Stack gap="xs">
      <Group>
        <Button variant="default" leftSection={<IconRefresh size={16} aria-hidden />} loading={reload.isPending} onClick={() => reload.mutate()}>
          Reload configuration
        </Button>
      </Group>
      <div aria-live="polite">
        {reload.isError && <ProblemAlert title="gatehouse.yaml was not applied" error={reload.error} />}
        {reload.isSuccess && (
          <Alert
            color="green"
            variant="light"
            icon={<IconCircleCheck aria-hidden />}
            title={reload.data.outcome === 'applied' ? 'Configuration reloaded' : 'Nothing to reload'}
            styles={{ title: { color: 'var(--mantine-color-text)' } }}
          >
            {reload.data.outcome === 'applied' ? (
              summary(reload.data).map((line) => (
                <Text key={line} size="sm">
                  {line}
                </Text>
              ))
            ) : (
              <Text size="sm">gatehouse.yaml says what is already in force.</Text>
            )}
          </Alert>
        )}
      </div>
    </Stack>
  );
}
