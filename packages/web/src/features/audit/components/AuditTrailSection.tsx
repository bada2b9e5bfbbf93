import { pages, withQuery, type AuditEvent } from '@gatehouse/contract';
import { Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { Section } from '../../../components/Section';
import { AuditEventsTable } from './AuditEventsTable';

export interface AuditTrailSectionProps {
  /** The user's latest events, newest first (the user page has them already). */
  events: AuditEvent[];
  userId: string;
  email: string;
}

/** A user's latest audit events, with the way to all of them in the audit log. */
export function AuditTrailSection({ events, userId, email }: AuditTrailSectionProps) {
  return (
    <Section
      title="Audit trail"
      description="The latest events by or about this user, newest first."
      actions={
        <Anchor component={Link} to={withQuery(pages.adminAudit.href(), { userId })} size="sm" fw={600}>
          All events in the audit log
        </Anchor>
      }
    >
      {events.length === 0 ? (
        <Text size="sm" c="dimmed">
          Nothing recorded for this user yet.
        </Text>
      ) : (
        <AuditEventsTable events={events} label={`Audit trail of ${email}`} />
      )}
    </Section>
  );
}
