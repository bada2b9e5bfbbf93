import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/providers/{id}/tests/{testId}`: a test sign-in's result (it never changes). */
export function getProviderTest(providerId: string, testId: string, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.getProviderTest, { params: { providerId, testId }, signal });
}

export const providerTestQueryOptions = (providerId: string, testId: string) =>
  queryOptions({
    queryKey: adminQueryKeys.providerTest(providerId, testId),
    queryFn: ({ signal }) => getProviderTest(providerId, testId, { signal }),
    staleTime: Infinity,
  });

export function useProviderTest(providerId: string, testId: string) {
  return useQuery(providerTestQueryOptions(providerId, testId));
}
