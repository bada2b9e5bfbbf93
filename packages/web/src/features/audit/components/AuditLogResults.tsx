import { Stack } from '@mantine/core';
import { IconListSearch } from '@tabler/icons-react';
import { NoResults } from '../../../components/NoResults';
import { Pager } from '../../../components/Pager';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { TableSkeleton } from '../../../components/TableSkeleton';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { useAuditLog, type AuditQuery } from '../api/getAuditLog';
import { hasAuditFilters } from '../utils/auditFilters';
import { AuditEventsTable } from './AuditEventsTable';

export interface AuditLogResultsProps {
  query: AuditQuery;
  onPageChange: (page: number) => void;
  onClearFilters: () => void;
}

/** One page of the audit log for the filters in effect, with its pager; loading, failure and empty states. */
export function AuditLogResults({ query, onPageChange, onClearFilters }: AuditLogResultsProps) {
  const audit = useAuditLog(query);

  if (audit.isPending || isUnauthenticated(audit.error)) return <TableSkeleton rows={8} label="Loading audit events" />;
  if (audit.isError) {
    return (
      <ProblemAlert
        title="We couldn't load the audit log"
        error={audit.error}
        onRetry={isForbidden(audit.error) ? undefined : () => void audit.refetch()}
      />
    );
  }
  const { events, total, page, pageSize } = audit.data;
  if (events.length === 0) {
    const filtered = hasAuditFilters(query);
    return (
      <NoResults
        icon={<IconListSearch size={32} aria-hidden />}
        filtered={filtered}
        title={filtered ? 'No events match these filters' : 'Nothing recorded yet'}
        description={filtered ? 'Try another type, outcome, user or time.' : 'Sign-ins, sign-outs and admin actions appear here as they happen.'}
        onClearFilters={onClearFilters}
      />
    );
  }
  return (
    <Stack gap="md" aria-busy={audit.isPlaceholderData} style={{ opacity: audit.isPlaceholderData ? 0.6 : 1 }}>
      <AuditEventsTable events={events} label="Audit events" />
      <Pager page={page} pageSize={pageSize} total={total} onChange={onPageChange} noun="events" one="event" />
    </Stack>
  );
}
