import type { AdminUser } from '@gatehouse/contract';
import { Select } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { useUsers } from '../api/getUsers';

export interface UserSelectProps {
  /** The picked user's id. */
  value: string | null;
  onChange: (userId: string | null, user: AdminUser | null) => void;
  label?: string;
  description?: string;
}

/** Picks one user by searching the server (email or name, ten at a time) as you type. */
export function UserSelect({ value, onChange, label = 'User', description = 'Search by email or name' }: UserSelectProps) {
  const [search, setSearch] = useState('');
  const [picked, setPicked] = useState<AdminUser | null>(null);
  const [query] = useDebouncedValue(search.trim(), 250);
  const users = useUsers({ query, status: '', page: 1, pageSize: 10 });
  const found = users.data?.users ?? [];
  // The picked user stays an option while other searches come and go.
  const options = picked && !found.some((user) => user.id === picked.id) ? [picked, ...found] : found;

  return (
    <Select
      label={label}
      description={description}
      placeholder="Type to search"
      searchable
      clearable
      searchValue={search}
      onSearchChange={setSearch}
      // The server already filtered.
      filter={({ options: all }) => all}
      data={options.map((user) => ({ value: user.id, label: user.email }))}
      value={value}
      onChange={(next) => {
        const user = options.find((candidate) => candidate.id === next) ?? null;
        setPicked(user);
        onChange(next, user);
      }}
      nothingFoundMessage={users.isFetching ? 'Searching…' : 'No users match'}
      error={users.isError ? "We couldn't search the users" : undefined}
    />
  );
}
