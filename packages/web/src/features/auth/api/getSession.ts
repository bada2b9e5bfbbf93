import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { sessionQueryKey } from '../../../lib/queryKeys';
import type { CurrentSession } from '../../../types/api';

/** `GET /api/session`: who is signed in and the session's public details; an `ApiError` 401 when nobody is. */
export function getSession({ signal }: { signal?: AbortSignal } = {}): Promise<CurrentSession> {
  return apiClient.get<CurrentSession>(apiPaths.session, signal ? { signal } : {});
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
