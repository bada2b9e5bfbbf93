import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths, withQuery } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

export type UserStatus = 'active' | 'suspended';

/** A user as the admin API shows them (the list and the detail page). */
export interface AdminUser {
  id: string;
  email: string;
  name: string;
  status: UserStatus;
  /** Effective admin, whichever way. */
  admin: boolean;
  /** The role comes from `admins:` in the config file, so the console cannot remove it. */
  adminFromConfig: boolean;
  /** ISO 8601. */
  createdAt: string;
  lastSignInAt: string | null;
  activeSessions: number;
}

/** What the users list asks for: a substring of email or name, a status, one page. */
export interface UsersQuery {
  query: string;
  /** '' for any status. */
  status: UserStatus | '';
  /** 1-based. */
  page: number;
  pageSize: number;
}

export interface UsersPage {
  users: AdminUser[];
  /** Matching users on all pages. */
  total: number;
  page: number;
  pageSize: number;
}

/** `GET /api/admin/users?query=&status=&page=&pageSize=`: searched and paged by the server. */
export async function getUsers(params: UsersQuery, { signal }: { signal?: AbortSignal } = {}): Promise<UsersPage> {
  const url = withQuery(apiPaths.admin.users, { query: params.query, status: params.status, page: params.page, pageSize: params.pageSize });
  const body = await apiClient.get<Partial<UsersPage>>(url, signal ? { signal } : {});
  const users = Array.isArray(body?.users) ? body.users : [];
  return {
    users,
    total: typeof body?.total === 'number' ? body.total : users.length,
    page: typeof body?.page === 'number' ? body.page : params.page,
    pageSize: typeof body?.pageSize === 'number' ? body.pageSize : params.pageSize,
  };
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
