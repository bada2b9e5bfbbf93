import { pages, type AdminUser, type UsersPage } from '@gatehouse/contract';
import { Text } from '@mantine/core';
import { IconUserSearch } from '@tabler/icons-react';
import { DataTable, RowLink, type DataTableColumn } from '../../../components/DataTable';
import { DateTime } from '../../../components/DateTime';
import { NoResults } from '../../../components/NoResults';
import { AdminBadge, StatusBadge } from './UserBadges';

const columns: DataTableColumn<AdminUser>[] = [
  { key: 'email', header: 'Email', cell: (user) => <RowLink to={pages.adminUser.href(user.id)}>{user.email}</RowLink> },
  { key: 'name', header: 'Name', cell: (user) => <Text size="sm">{user.name || '—'}</Text> },
  { key: 'status', header: 'Status', cell: (user) => <StatusBadge status={user.status} /> },
  {
    key: 'role',
    header: 'Role',
    cell: (user) =>
      user.admin ? (
        <AdminBadge user={user} />
      ) : (
        <Text size="sm" c="dimmed">
          Member
        </Text>
      ),
  },
  {
    key: 'lastSignIn',
    header: 'Last sign-in',
    cell: (user) => <Text size="sm">{user.lastSignInAt ? <DateTime value={user.lastSignInAt} relative /> : 'Never'}</Text>,
  },
  { key: 'sessions', header: 'Sessions', align: 'right', cell: (user) => <Text size="sm">{user.activeSessions}</Text> },
];

export interface UsersTableProps {
  data: UsersPage;
  /** The search in effect, for the empty state's words. */
  query: string;
  filtered: boolean;
  onClearFilters: () => void;
}

/** One page of users; each email leads to the user's page. */
export function UsersTable({ data, query, filtered, onClearFilters }: UsersTableProps) {
  return (
    <DataTable
      columns={columns}
      rows={data.users}
      getRowKey={(user) => user.id}
      getRowAttributes={(user) => ({ 'data-user-id': user.id })}
      minWidth={760}
      label="Users"
      testId="users-table"
      empty={
        <NoResults
          icon={<IconUserSearch size={32} aria-hidden />}
          filtered={filtered}
          title={filtered ? (query ? `No users match “${query}”` : 'No users match these filters') : 'No users yet'}
          description={filtered ? 'Try another search or status.' : 'People appear here after their first sign-in.'}
          onClearFilters={onClearFilters}
        />
      }
    />
  );
}
