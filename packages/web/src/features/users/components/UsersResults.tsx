import { Stack } from '@mantine/core';
import { Pager } from '../../../components/Pager';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { TableSkeleton } from '../../../components/TableSkeleton';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { useUsers, type UsersQuery } from '../api/getUsers';
import { UsersTable } from './UsersTable';

export interface UsersResultsProps {
  query: UsersQuery;
  onPageChange: (page: number) => void;
  onClearFilters: () => void;
}

/** One page of users for the search in effect, with its pager; loading, failure and empty states. */
export function UsersResults({ query, onPageChange, onClearFilters }: UsersResultsProps) {
  const users = useUsers(query);

  if (users.isPending || isUnauthenticated(users.error)) return <TableSkeleton rows={8} label="Loading users" />;
  if (users.isError) {
    return (
      <ProblemAlert
        title="We couldn't load the users"
        error={users.error}
        onRetry={isForbidden(users.error) ? undefined : () => void users.refetch()}
      />
    );
  }
  const { total, page, pageSize } = users.data;
  return (
    <Stack gap="md" aria-busy={users.isPlaceholderData} style={{ opacity: users.isPlaceholderData ? 0.6 : 1 }}>
      <UsersTable data={users.data} query={query.query} filtered={Boolean(query.query || query.status)} onClearFilters={onClearFilters} />
      {users.data.users.length > 0 && <Pager page={page} pageSize={pageSize} total={total} onChange={onPageChange} noun="users" one="user" />}
    </Stack>
  );
}
