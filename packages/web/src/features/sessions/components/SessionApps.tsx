import type { MyAppSignIn } from '@gatehouse/contract';
import { Button, Group, Stack, Text } from '@mantine/core';
import { DateTime } from '../../../components/DateTime';
import { scopeWords } from '../../../lib/scopeWords';
import classes from './SessionApps.module.css';

export interface SessionAppsProps {
  apps: MyAppSignIn[];
  /** Whether this is the session of this page: ending it is "Sign out", not "Revoke". */
  current: boolean;
  /** The grant being ended now, if any. */
  pending: string | undefined;
  onSignOut(app: MyAppSignIn): void;
}

/** "Grafana and Gitea": the apps a session's end would sign the person out of. */
export function appNames(apps: readonly MyAppSignIn[]): string {
  const names = [...new Set(apps.map((app) => app.app.name))];
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/**
 * The apps signed in with Gatehouse in one session: each by name, since when, what it may know of the
 * person, with "Sign out of <app>"; and what ending the whole session ends with it.
 */
export function SessionApps({ apps, current, pending, onSignOut }: SessionAppsProps) {
  if (apps.length === 0) return null;
  return (
    <Stack gap={6} className={classes.apps}>
      <Text size="xs" fw={600}>
        Apps signed in with Gatehouse
      </Text>
      <ul className={classes.list} aria-label="Apps signed in with Gatehouse in this session">
        {apps.map((app) => (
          <li key={app.grantId} className={classes.app}>
            <Stack gap={0} miw={0} className={classes.text}>
              <Text size="sm" fw={500}>
                {app.app.name}
              </Text>
              <Text size="xs">
                Signed in <DateTime value={app.signedInAt} relative /> · It can see {scopeWords(app.scopes)}
              </Text>
            </Stack>
            <Group gap={0}>
              <Button size="compact-xs" variant="default" loading={pending === app.grantId} disabled={pending !== undefined && pending !== app.grantId} onClick={() => onSignOut(app)}>
                Sign out of {app.app.name}
              </Button>
            </Group>
          </li>
        ))}
      </ul>
      <Text size="xs">
        {current ? 'Signing out' : 'Revoking this session'} also signs you out of {appNames(apps)}.
      </Text>
    </Stack>
  );
}
