import { toSearchParams } from '@gatehouse/contract';
import { Stack } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useSearchParams, type LoaderFunctionArgs } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { PageTitle } from '../../components/PageTitle';
import { usersQueryOptions } from '../../features/users/api/getUsers';
import { UsersFilters } from '../../features/users/components/UsersFilters';
import { UsersResults } from '../../features/users/components/UsersResults';
import { readUsersQuery, usersQueryValues } from '../../features/users/utils/usersSearch';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(usersQueryOptions(readUsersQuery(new URL(request.url).searchParams)));
    return null;
  };

/** `/admin/users[?query=&status=&page=]`: every user, searched and paged by the server. */
export default function AdminUsersRoute() {
  const [search, setSearch] = useSearchParams();
  const query = readUsersQuery(search);
  const go = (next: Omit<typeof query, 'pageSize'>, replace: boolean) => setSearch(toSearchParams(usersQueryValues(next)), { replace });

  return (
    <Stack gap="lg">
      <PageTitle title={query.query ? `Users matching “${query.query}”` : 'Users'} />
      <PageHeader
        title="Users"
        description="Everyone who has signed in to Gatehouse. Open a user to suspend them, end their sessions or change their role."
      />
      <UsersFilters
        query={query.query}
        status={query.status}
        // Typing replaces the history entry rather than adding one per pause.
        onChange={(filters) => go({ ...filters, page: 1 }, true)}
      />
      <UsersResults
        query={query}
        onPageChange={(page) => {
          go({ ...query, page }, false);
          window.scrollTo({ top: 0 });
        }}
        onClearFilters={() => go({ query: '', status: '', page: 1 }, true)}
      />
    </Stack>
  );
}
