import type { ConfigReload } from '@gatehouse/contract';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck, IconInfoCircle, IconRefresh } from '@tabler/icons-react';
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

interface Told {
  title: string;
  lines: string[];
  /** Not a success to report: there was nothing to read. */
  noFile?: boolean;
}

/** The title and sentences of a reload that applied nothing: the file says what is in force, or there is no file. */
function unchanged({ config }: ConfigReload): Told {
  if (config.file === null) {
    return {
      noFile: true,
      title: 'No configuration file',
      lines: [
        'Gatehouse runs on its built-in development defaults, not on a file, so there is nothing to read again.',
        'To change them, write a gatehouse.yaml and restart Gatehouse with it.',
      ],
    };
  }
  const name = config.file.split(/[\\/]/).pop() || config.file;
  return { title: 'Nothing to reload', lines: [`${name} says what is already in force.`] };
}

/**
 * Reloads gatehouse.yaml without a restart, as SIGHUP does, and shows what changed or why the file was
 * refused (then nothing of it applies); then what deserves attention in what is now in force (a trust
 * warning, a provider whose IdP did not answer), as check-config --online says it.
 */
export function ReloadConfigCard() {
  const reload = useReloadConfig();
  const result = reload.data;
  const told: Told | undefined = result ? (result.outcome === 'applied' ? { title: 'Configuration reloaded', lines: summary(result) } : unchanged(result)) : undefined;
  return (
    <Stack gap="xs">
      <Group>
        <Button variant="default" leftSection={<IconRefresh size={16} aria-hidden />} loading={reload.isPending} onClick={() => reload.mutate()}>
          Reload configuration
        </Button>
      </Group>
      <Stack gap="xs" aria-live="polite">
        {reload.isError && <ProblemAlert title="gatehouse.yaml was not applied" error={reload.error} />}
        {reload.isSuccess && told && (
          <Alert
            color={told.noFile ? 'blue' : 'green'}
            variant="light"
            icon={told.noFile ? <IconInfoCircle aria-hidden /> : <IconCircleCheck aria-hidden />}
            title={told.title}
            styles={{ title: { color: 'var(--mantine-color-text)' } }}
          >
            {told.lines.map((line) => (
              <Text key={line} size="sm">
                {line}
              </Text>
            ))}
          </Alert>
        )}
        {reload.isSuccess && result && result.warnings.length > 0 && (
          <Alert
            color="yellow"
            variant="light"
            icon={<IconAlertTriangle aria-hidden />}
            title={result.warnings.length === 1 ? 'One warning' : `${result.warnings.length} warnings`}
            styles={{ title: { color: 'var(--mantine-color-text)' } }}
          >
            {result.warnings.map((warning) => (
              <Text key={warning} size="sm" style={{ overflowWrap: 'anywhere' }}>
                {warning}
              </Text>
            ))}
          </Alert>
        )}
      </Stack>
    </Stack>
  );
}
