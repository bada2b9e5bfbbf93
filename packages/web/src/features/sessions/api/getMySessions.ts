import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/me/sessions`: the signed-in person's active sessions, most recently active first. */
export function getMySessions({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.me.getMySessions, { signal });
}

export const mySessionsQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.sessions,
    queryFn: ({ signal }) => getMySessions({ signal }),
    // Refetched whenever the window regains focus, fresh or not: a session revoked on another device (or
    // expired) should be gone from the list the moment the person looks again.
    refetchOnWindowFocus: 'always',
  });

export function useMySessions() {
  return useQuery(mySessionsQueryOptions());
}
