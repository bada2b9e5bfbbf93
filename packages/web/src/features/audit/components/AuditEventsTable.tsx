import { pages, type AuditEvent, type UserRef } from '@gatehouse/contract';
import { Anchor, Badge, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { DataTable, type DataTableColumn } from '../../../components/DataTable';
import { DateTime } from '../../../components/DateTime';
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
    <Anchor component={Link} to={pages.adminUser.href(person.id)} size="sm" style={{ overflowWrap: 'break-word' }}>
      {person.email}
    </Anchor>
  );
}

const columns: DataTableColumn<AuditEvent>[] = [
  {
    key: 'time',
    header: 'Time',
    noWrap: true,
    cell: (event) => (
      <Text size="sm">
        <DateTime value={event.time} />
      </Text>
    ),
  },
  {
    key: 'event',
    header: 'Event',
    cell: (event) => (
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
    ),
  },
  { key: 'actor', header: 'Actor', cell: (event) => <Person person={event.actor} fallback="System" /> },
  { key: 'target', header: 'Target', cell: (event) => <Person person={event.target} fallback="—" /> },
  {
    key: 'ip',
    header: 'IP address',
    cell: (event) => (
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {event.ip ?? '—'}
      </Text>
    ),
  },
  {
    key: 'details',
    header: 'Details',
    cell: (event) => (
      <Text size="sm" title={event.userAgent ?? undefined} style={{ overflowWrap: 'anywhere' }}>
        {describeAuditDetails(event) || '—'}
      </Text>
    ),
  },
];

export interface AuditEventsTableProps {
  events: AuditEvent[];
  /** Names the table for screen readers ("Audit events", "Audit trail of bob@example.com"). */
  label: string;
}

/** Audit events, newest first: when, what (and whether it worked), who, whom, from where, details. */
export function AuditEventsTable({ events, label }: AuditEventsTableProps) {
  return (
    <DataTable
      columns={columns}
      rows={events}
      getRowKey={(event) => event.id}
      getRowAttributes={(event) => ({ 'data-type': event.type, 'data-outcome': event.outcome })}
      minWidth={900}
      label={label}
      testId="audit-table"
      compact
    />
  );
}
