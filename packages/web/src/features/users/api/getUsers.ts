import { routes, type UserStatus } from '@gatehouse/contract';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** What the users list asks for: a substring of email or name, a status, one page. */
export interface UsersQuery {
  query: string;
  /** '' for any status. */
  status: UserStatus | '';
  /** 1-based. */
  page: number;
  pageSize: number;
}

/** `GET /api/admin/users?query=&status=&page=&pageSize=`: searched and paged by the server. */
export function getUsers(params: UsersQuery, { signal }: { signal?: AbortSignal } = {}) {
  const { query, status, page, pageSize } = params;
  return callApi(routes.admin.listUsers, { query: { query, status: status || undefined, page, pageSize }, signal });
}

export const usersQueryOptions = (params: UsersQuery) =>
  queryOptions({
    queryKey: adminQueryKeys.userList(params),
    queryFn: ({ signal }) => getUsers(params, { signal }),
    // The previous page or search stays on screen (marked busy) while the next one loads.
    placeholderData: keepPreviousData,
  });

export function useUsers(params: UsersQuery) {
  return useQuery(usersQueryOptions(params));
}
