import { Anchor, Badge, Stack, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { DateTime } from '../../../components/DateTime';
import { paths } from '../../../config/paths';
import type { AuditEvent, UserRef } from '../../../types/api';
import { describeAuditDetails, eventTypeLabel } from '../utils/describeAuditEvent';

function Person({ person, fallback }: { person: UserRef | null; fallback: string }) {
  if (!person) {
    return (
      <Text size="sm" c="dimmed">
        {fallback}
      </Text>
    );
  }
  return (
    <Anchor component={Link} to={paths.adminUser.getHref(person.id)} size="sm" style={{ overflowWrap: 'break-word' }}>
      {person.email}
    </Anchor>
  );
}

export interface AuditEventsTableProps {
  events: AuditEvent[];
  /** Names the table for screen readers ("Audit events", "Audit trail of bob@example.com"). */
  label: string;
}

/** Audit events, newest first: when, what (and whether it worked), who, whom, from where, details. */
export function AuditEventsTable({ events, label }: AuditEventsTableProps) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table verticalSpacing="xs" striped highlightOnHover aria-label={label} data-testid="audit-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Time</Table.Th>
            <Table.Th scope="col">Event</Table.Th>
            <Table.Th scope="col">Actor</Table.Th>
            <Table.Th scope="col">Target</Table.Th>
            <Table.Th scope="col">IP address</Table.Th>
            <Table.Th scope="col">Details</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((event) => {
            const details = describeAuditDetails(event);
            return (
              <Table.Tr key={event.id} data-type={event.type} data-outcome={event.outcome}>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>
                  <Text size="sm">
                    <DateTime value={event.time} />
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Stack gap={2} align="flex-start">
                    <Text size="sm" fw={600}>
                      {eventTypeLabel(event.type)}
                    </Text>
                    {/* The outcome in words, not only in colour. */}
                    {event.outcome === 'failure' ? (
                      <Badge color="red" variant="dot" size="sm" tt="none">
                        Failure
                      </Badge>
                    ) : (
                      <Badge color="green" variant="dot" size="sm" tt="none">
                        Success
                      </Badge>
                    )}
                  </Stack>
                </Table.Td>
                <Table.Td>
                  <Person person={event.actor} fallback="System" />
                </Table.Td>
                <Table.Td>
                  <Person person={event.target} fallback="—" />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                    {event.ip ?? '—'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" title={event.userAgent ?? undefined} style={{ overflowWrap: 'anywhere' }}>
                    {details || '—'}
                  </Text>
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
