import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/users/{id}/grants`: the apps the user is signed in to with Gatehouse (404 when unknown). */
export function getUserGrants(userId: string, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.listUserGrants, { params: { userId }, signal });
}

export const userGrantsQueryOptions = (userId: string) =>
  queryOptions({
    queryKey: adminQueryKeys.userGrants(userId),
    queryFn: ({ signal }) => getUserGrants(userId, { signal }),
    refetchOnWindowFocus: 'always',
  });

export function useUserGrants(userId: string) {
  return useQuery(userGrantsQueryOptions(userId));
}
