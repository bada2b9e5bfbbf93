import type { UserStatus } from '@gatehouse/contract';
import { Group, Select } from '@mantine/core';
import { SearchInput } from '../../../components/SearchInput';
import { STATUS_OPTIONS } from '../utils/usersSearch';

export interface UsersFiltersProps {
  query: string;
  status: UserStatus | '';
  /** A new search or status; the list goes back to its first page. */
  onChange: (next: { query: string; status: UserStatus | '' }) => void;
}

/** Search by email or name (as you type, searched by the server) and filter by status. */
export function UsersFilters({ query, status, onChange }: UsersFiltersProps) {
  return (
    <Group align="flex-end" gap="md" role="search" aria-label="Users">
      <SearchInput
        label="Search users"
        placeholder="Email or name"
        value={query}
        onSearch={(next) => onChange({ query: next, status })}
        style={{ flex: '1 1 280px' }}
        maxLength={200}
      />
      <Select
        label="Status"
        data={STATUS_OPTIONS.map((option) => ({ ...option }))}
        value={status}
        onChange={(next) => onChange({ query, status: (next ?? '') as UserStatus | '' })}
        allowDeselect={false}
        w={180}
      />
    </Group>
  );
}
