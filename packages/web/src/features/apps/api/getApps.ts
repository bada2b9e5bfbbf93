import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';

/** `GET /api/apps`: only the apps the signed-in person may open (401 when signed out). */
export function getApps({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.session.getApps, { signal });
}

export const appsQueryOptions = () =>
  queryOptions({
    queryKey: ['apps'],
    queryFn: ({ signal }) => getApps({ signal }),
  });

export function useApps() {
  return useQuery(appsQueryOptions());
}
