import { Anchor, Table, Text } from '@mantine/core';
import { IconUserSearch } from '@tabler/icons-react';
import { Link } from 'react-router';
import { DateTime } from '../../../components/DateTime';
import { NoResults } from '../../../components/NoResults';
import { paths } from '../../../config/paths';
import type { UsersPage } from '../api/getUsers';
import { AdminBadge, StatusBadge } from './UserBadges';

export interface UsersTableProps {
  data: UsersPage;
  /** The search in effect, for the empty state's words. */
  query: string;
  filtered: boolean;
  onClearFilters: () => void;
}

/** One page of users; each email leads to the user's page. */
export function UsersTable({ data, query, filtered, onClearFilters }: UsersTableProps) {
  if (data.users.length === 0) {
    return (
      <NoResults
        icon={<IconUserSearch size={32} aria-hidden />}
        filtered={filtered}
        title={filtered ? (query ? `No users match “${query}”` : 'No users match these filters') : 'No users yet'}
        description={filtered ? 'Try another search or status.' : 'People appear here after their first sign-in.'}
        onClearFilters={onClearFilters}
      />
    );
  }
  return (
    <Table.ScrollContainer minWidth={760}>
      <Table highlightOnHover verticalSpacing="sm" data-testid="users-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Email</Table.Th>
            <Table.Th scope="col">Name</Table.Th>
            <Table.Th scope="col">Status</Table.Th>
            <Table.Th scope="col">Role</Table.Th>
            <Table.Th scope="col">Last sign-in</Table.Th>
            <Table.Th scope="col" ta="right">
              Sessions
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {data.users.map((user) => (
            <Table.Tr key={user.id} data-user-id={user.id}>
              <Table.Td>
                <Anchor component={Link} to={paths.adminUser.getHref(user.id)} fw={600} size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {user.email}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{user.name || '—'}</Text>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={user.status} />
              </Table.Td>
              <Table.Td>
                {user.admin ? (
                  <AdminBadge user={user} />
                ) : (
                  <Text size="sm" c="dimmed">
                    Member
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm">{user.lastSignInAt ? <DateTime value={user.lastSignInAt} relative /> : 'Never'}</Text>
              </Table.Td>
              <Table.Td ta="right">
                <Text size="sm">{user.activeSessions}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
