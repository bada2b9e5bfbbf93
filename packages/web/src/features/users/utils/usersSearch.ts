import type { UserStatus } from '@gatehouse/contract';
import type { UsersQuery } from '../api/getUsers';

export const USERS_PAGE_SIZE = 50;

export const STATUS_OPTIONS: ReadonlyArray<{ value: UserStatus | ''; label: string }> = [
  { value: '', label: 'Any status' },
  { value: 'active', label: 'Active' },
  { value: 'suspended', label: 'Suspended' },
];

/** A page number from the address: a positive whole number, or 1. */
export function parsePage(value: string | null | undefined): number {
  if (!value || !/^\d{1,6}$/.test(value)) return 1;
  return Math.max(1, Number(value));
}

/** The users list's address (`?query=&status=&page=`) as what to ask the server. */
export function readUsersQuery(search: URLSearchParams): UsersQuery {
  const status = search.get('status');
  return {
    query: (search.get('query') ?? '').trim(),
    status: status === 'active' || status === 'suspended' ? status : '',
    page: parsePage(search.get('page')),
    pageSize: USERS_PAGE_SIZE,
  };
}

/** The other way: the address for a query (defaults left out, so the plain list is just `/admin/users`). */
export function usersQueryValues(query: Omit<UsersQuery, 'pageSize'>): Record<string, string | undefined> {
  return {
    query: query.query || undefined,
    status: query.status || undefined,
    page: query.page > 1 ? String(query.page) : undefined,
  };
}
