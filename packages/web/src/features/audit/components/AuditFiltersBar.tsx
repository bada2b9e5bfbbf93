import { isAuditEventType } from '@gatehouse/contract';
import { Button, Group, Select, SimpleGrid, TextInput } from '@mantine/core';
import { IconFilterOff } from '@tabler/icons-react';
import { SearchInput } from '../../../components/SearchInput';
import type { AuditFilters } from '../api/getAuditLog';
import { AUDIT_EVENT_TYPES, OUTCOME_OPTIONS, fromDateTimeLocal, hasAuditFilters, toDateTimeLocal } from '../utils/auditFilters';

export interface AuditFiltersBarProps {
  filters: AuditFilters;
  /** New filters; the log goes back to its first page. */
  onChange: (filters: AuditFilters) => void;
}

/** Narrow the audit log by type, outcome, user and time; each change applies at once. */
export function AuditFiltersBar({ filters, onChange }: AuditFiltersBarProps) {
  const set = (patch: Partial<AuditFilters>) => onChange({ ...filters, ...patch });
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="md" verticalSpacing="sm" role="search" aria-label="Audit log">
      <Select
        label="Event type"
        placeholder="Any type"
        data={AUDIT_EVENT_TYPES.map((type) => ({ ...type }))}
        value={filters.type || null}
        onChange={(type) => set({ type: type && isAuditEventType(type) ? type : '' })}
        clearable
        clearButtonProps={{ 'aria-label': 'Any type' }}
        searchable
      />
      <Select
        label="Outcome"
        data={OUTCOME_OPTIONS.map((option) => ({ ...option }))}
        value={filters.outcome}
        onChange={(outcome) => set({ outcome: (outcome ?? '') as AuditFilters['outcome'] })}
        allowDeselect={false}
      />
      <SearchInput
        label="User"
        description="Email or ID"
        // The hint under the box, so the boxes of a row line up (a hint above pushed this one lower).
        inputWrapperOrder={['label', 'input', 'description', 'error']}
        placeholder="Any user"
        value={filters.userId}
        onSearch={(userId) => set({ userId })}
        leftSection={null}
        maxLength={254}
      />
      <TextInput
        type="datetime-local"
        label="From"
        value={toDateTimeLocal(filters.from)}
        onChange={(event) => set({ from: fromDateTimeLocal(event.currentTarget.value) })}
      />
      <TextInput
        type="datetime-local"
        label="To"
        value={toDateTimeLocal(filters.to)}
        onChange={(event) => set({ to: fromDateTimeLocal(event.currentTarget.value) })}
      />
      {hasAuditFilters(filters) && (
        <Group align="flex-end">
          <Button
            variant="subtle"
            leftSection={<IconFilterOff size={16} aria-hidden />}
            onClick={() => onChange({ type: '', userId: '', outcome: '', from: '', to: '' })}
          >
            Clear filters
          </Button>
        </Group>
      )}
    </SimpleGrid>
  );
}
