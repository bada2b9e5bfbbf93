import type { DeviceType, UserSession } from '@gatehouse/contract';
import { Button, Stack, Text, ThemeIcon } from '@mantine/core';
import { IconDeviceDesktop, IconDeviceMobile, IconDeviceTablet, IconDevices } from '@tabler/icons-react';
import { useRef, useState } from 'react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { Item, ItemList } from '../../../components/ItemList';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { deviceLabel } from '../../../lib/deviceLabel';
import { formatRelativeTime } from '../../../lib/formatRelativeTime';
import { useRevokeUserSession } from '../api/revokeUserSession';

const DEVICE_ICONS: Record<DeviceType, typeof IconDevices> = {
  desktop: IconDeviceDesktop,
  mobile: IconDeviceMobile,
  tablet: IconDeviceTablet,
  other: IconDevices,
};

export interface UserSessionsSectionProps {
  sessions: UserSession[];
  /** The admin's own session (when this is their own page): marked, since revoking it signs them out. */
  currentSessionId?: string | undefined;
}

/** The user's active sessions; any of them can be revoked (that browser is signed out at its next request). */
export function UserSessionsSection({ sessions, currentSessionId }: UserSessionsSectionProps) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const revoke = useRevokeUserSession();
  const [status, setStatus] = useState('');

  return (
    <Section title="Sessions" description="Browsers signed in as this user right now." headingRef={headingRef}>
      {revoke.isError && <ProblemAlert title="We couldn't revoke that session" error={revoke.error} />}
      {sessions.length === 0 ? (
        <Text size="sm" c="dimmed">
          No active sessions.
        </Text>
      ) : (
        <ItemList>
          {sessions.map((session) => {
            const Icon = DEVICE_ICONS[session.device?.type] ?? IconDevices;
            const label = deviceLabel(session.device);
            const current = session.id === currentSessionId;
            return (
              <Item
                key={session.id}
                data-current={current || undefined}
                actions={
                  <Button
                    size="xs"
                    variant="default"
                    aria-label={`Revoke session ${label}, last active ${formatRelativeTime(session.lastSeenAt) ?? 'more than a month ago'}`}
                    loading={revoke.isPending && revoke.variables === session.id}
                    disabled={revoke.isPending && revoke.variables !== session.id}
                    onClick={() => {
                      setStatus('');
                      revoke.mutate(session.id, {
                        onSuccess: () => {
                          setStatus(`Revoked the session on ${label}.`);
                          // The focused button goes with its row; keep focus in the section.
                          headingRef.current?.focus();
                        },
                      });
                    }}
                  >
                    Revoke
                  </Button>
                }
              >
                <ThemeIcon variant="light" color="gray" size="lg" radius="md" aria-hidden>
                  <Icon size={20} />
                </ThemeIcon>
                <Stack gap={4} miw={0}>
                  <Text fw={600} size="sm">
                    {label}
                    {current ? ' (your session)' : ''}
                  </Text>
                  <Facts
                    facts={[
                      { label: 'IP address', value: session.ip ?? 'Unknown' },
                      { label: 'Signed in', value: <DateTime value={session.createdAt} /> },
                      { label: 'Last active', value: <DateTime value={session.lastSeenAt} relative /> },
                      { label: 'Expires', value: <DateTime value={session.expiresAt} /> },
                      { label: 'Provider', value: session.provider.name },
                    ]}
                  />
                </Stack>
              </Item>
            );
          })}
        </ItemList>
      )}
      {/* Always in the page, so screen readers announce the text when it changes. */}
      <Text size="sm" fw={500} role="status">
        {status}
      </Text>
    </Section>
  );
}
