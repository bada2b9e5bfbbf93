import type { DeviceType, MyAppSignIn, MySession } from '@gatehouse/contract';
import { Badge, Button, Card, Group, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconDeviceDesktop, IconDeviceMobile, IconDeviceTablet, IconDevices, IconLogout2 } from '@tabler/icons-react';
import { useId, useRef, useState, type ReactNode } from 'react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { Item, ItemList } from '../../../components/ItemList';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { isUnauthenticated } from '../../../lib/apiClient';
import { formatRelativeTime } from '../../../lib/formatRelativeTime';
import { useMySessions } from '../api/getMySessions';
import { useRevokeOtherSessions } from '../api/revokeOtherSessions';
import { useRevokeSession } from '../api/revokeSession';
import { useRevokeAppSignIn } from '../api/revokeAppSignIn';
import { appNames, SessionApps } from './SessionApps';
import { deviceLabel } from '../../../lib/deviceLabel';

export interface SessionsSectionProps {
  /** More buttons beside "Sign out everywhere else" (the account page puts "Sign out everywhere" here). */
  actions?: ReactNode;
}

const DEVICE_ICONS: Record<DeviceType, typeof IconDevices> = {
  desktop: IconDeviceDesktop,
  mobile: IconDeviceMobile,
  tablet: IconDeviceTablet,
  other: IconDevices,
};

interface SessionItemProps {
  session: MySession;
  actions?: ReactNode;
  /** The grant being ended now, if any. */
  pendingApp: string | undefined;
  onSignOutOfApp(app: MyAppSignIn): void;
}

function SessionItem({ session, actions, pendingApp, onSignOutOfApp }: SessionItemProps) {
  const Icon = DEVICE_ICONS[session.device?.type] ?? IconDevices;
  return (
    <Item actions={actions} data-current={session.current || undefined}>
      <ThemeIcon variant="light" color="gray" size="lg" radius="md" aria-hidden>
        <Icon size={20} />
      </ThemeIcon>
      {/* As wide as the row, so the apps' sign-out buttons line up at its end. */}
      <Stack gap={4} miw={0} style={{ flex: 1 }}>
        <Group gap={8}>
          <Text fw={600} size="sm">
            {deviceLabel(session.device)}
          </Text>
          {session.current && (
            <Badge variant="dot" color="green" size="sm">
              This session
            </Badge>
          )}
        </Group>
        <Facts
          facts={[
            { label: 'IP address', value: session.ip ?? 'Unknown' },
            { label: 'Signed in', value: <DateTime value={session.createdAt} /> },
            { label: 'Last active', value: <DateTime value={session.lastSeenAt} relative /> },
            { label: 'Provider', value: session.provider.name },
          ]}
        />
        <SessionApps apps={session.apps} current={session.current} pending={pendingApp} onSignOut={onSignOutOfApp} />
      </Stack>
    </Item>
  );
}

function SessionsSkeleton() {
  return (
    <Stack gap="sm" role="status" aria-label="Loading sessions">
      <Skeleton height={44} />
      <Skeleton height={44} />
    </Stack>
  );
}

/**
 * The account page's "Sessions": every browser signed in to this account, the current one marked;
 * each other one can be revoked, or all of them at once ("Sign out everywhere else").
 */
export function SessionsSection({ actions }: SessionsSectionProps) {
  const headingId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const sessions = useMySessions();
  const revoke = useRevokeSession();
  const revokeOthers = useRevokeOtherSessions();
  const revokeApp = useRevokeAppSignIn();
  // What the last action did, for everyone: the row it removed is gone, so say so in words.
  const [status, setStatus] = useState('');

  const list = sessions.data?.sessions;
  const otherCount = list?.filter((session) => !session.current).length ?? 0;

  const onSignOutOfApp = (app: MyAppSignIn) => {
    setStatus('');
    revoke.reset();
    revokeOthers.reset();
    revokeApp.mutate(app.grantId, {
      onSuccess: () => {
        setStatus(`Signed out of ${app.app.name}.`);
        // The focused button goes with its row; keep focus in the section.
        headingRef.current?.focus();
      },
    });
  };

  const onRevoke = (session: MySession) => {
    setStatus('');
    revokeOthers.reset();
    revokeApp.reset();
    revoke.mutate(session.id, {
      onSuccess: () => {
        setStatus(`Signed out ${deviceLabel(session.device)}.`);
        // The focused button is about to disappear with its row; keep focus in the section.
        headingRef.current?.focus();
      },
    });
  };

  const onRevokeOthers = () => {
    setStatus('');
    revoke.reset();
    revokeApp.reset();
    revokeOthers.mutate(undefined, {
      onSuccess: ({ revoked }) => {
        setStatus(revoked === 1 ? 'Signed out 1 other session.' : `Signed out ${revoked} other sessions.`);
        headingRef.current?.focus();
      },
    });
  };

  let content: ReactNode;
  if (sessions.isPending || isUnauthenticated(sessions.error)) {
    // A 401 is handled by the page (it goes to sign in); until then, nothing to show.
    content = <SessionsSkeleton />;
  } else if (sessions.isError) {
    content = <ProblemAlert title="We couldn't load your sessions" error={sessions.error} onRetry={() => void sessions.refetch()} />;
  } else if (!list || list.length === 0) {
    content = (
      <Text size="sm" c="dimmed">
        No active sessions.
      </Text>
    );
  } else {
    content = (
      <ItemList>
        {list.map((session) => (
          <SessionItem
            key={session.id}
            session={session}
            pendingApp={revokeApp.isPending ? revokeApp.variables : undefined}
            onSignOutOfApp={onSignOutOfApp}
            actions={
              // The current session has no "Revoke": ending it is "Sign out".
              session.current ? undefined : (
                <Button
                  size="xs"
                  variant="default"
                  aria-label={`Revoke session ${deviceLabel(session.device)}, last active ${formatRelativeTime(session.lastSeenAt) ?? 'more than a month ago'}${
                    session.apps.length ? `, which also signs you out of ${appNames(session.apps)}` : ''
                  }`}
                  loading={revoke.isPending && revoke.variables === session.id}
                  disabled={revokeOthers.isPending}
                  onClick={() => onRevoke(session)}
                >
                  Revoke
                </Button>
              )
            }
          />
        ))}
      </ItemList>
    );
  }

  return (
    <Card component="section" aria-labelledby={headingId} withBorder radius="md" padding="lg">
      <Stack gap="md">
        <Stack gap={4}>
          <Title order={2} size="h3" id={headingId} ref={headingRef} tabIndex={-1} style={{ outline: 'none' }}>
            Sessions
          </Title>
          <Text size="sm" c="dimmed">
            The browsers and devices signed in to your account, with the apps you signed in to with Gatehouse in each. Revoke any
            you don&apos;t recognise.
          </Text>
        </Stack>

        {revoke.isError && !isUnauthenticated(revoke.error) && (
          <ProblemAlert title="We couldn't revoke that session" error={revoke.error} />
        )}
        {revokeApp.isError && !isUnauthenticated(revokeApp.error) && (
          <ProblemAlert title="We couldn't sign you out of that app" error={revokeApp.error} />
        )}
        {revokeOthers.isError && !isUnauthenticated(revokeOthers.error) && (
          <ProblemAlert title="We couldn't sign out your other sessions" error={revokeOthers.error} />
        )}

        {content}

        <Group gap="sm">
          <Button
            variant="default"
            leftSection={<IconLogout2 size={18} aria-hidden />}
            disabled={otherCount === 0 || revoke.isPending}
            loading={revokeOthers.isPending}
            onClick={onRevokeOthers}
          >
            Sign out everywhere else
          </Button>
          {actions}
          {/* Always in the page, so screen readers announce the text when it changes. */}
          <Text size="sm" role="status" fw={500}>
            {status}
          </Text>
        </Group>
      </Stack>
    </Card>
  );
}
