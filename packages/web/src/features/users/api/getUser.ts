import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/users/{id}`: the user with identities, active sessions and audit trail (404 when unknown). */
export function getUser(userId: string, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.getUser, { params: { userId }, signal });
}

export const userQueryOptions = (userId: string) =>
  queryOptions({
    queryKey: adminQueryKeys.user(userId),
    queryFn: ({ signal }) => getUser(userId, { signal }),
    // Sessions come and go while an admin looks at them.
    refetchOnWindowFocus: 'always',
  });

export function useUser(userId: string) {
  return useQuery(userQueryOptions(userId));
}
