import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { sessionQueryKey } from '../../../lib/queryKeys';

/** `GET /api/session`: who is signed in and the session's public details; an `ApiError` 401 when nobody is. */
export function getSession({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.session.getSession, { signal });
}

export { sessionQueryKey };

export const sessionQueryOptions = () =>
  queryOptions({
    queryKey: sessionQueryKey,
    queryFn: ({ signal }) => getSession({ signal }),
  });

export function useSession() {
  return useQuery(sessionQueryOptions());
}
