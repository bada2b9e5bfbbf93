import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** What a test sign-in found: the profile the provider sent, and what the sign-in rules would decide. */
export interface ProviderTestResult {
  id: string;
  time: string;
  provider: { id: string; name: string };
  actor: { id: string; email: string } | null;
  /** `create`, `existing`, `link`: the person would get in; `refused`: a rule says no; `failed`: the sign-in itself failed. */
  result: 'create' | 'existing' | 'link' | 'refused' | 'failed';
  /** The catalogue code and sentence people would get (refused, failed). */
  code: string | null;
  message: string | null;
  /** Which rule refused (for admins). */
  why: string | null;
  /** The user the person would be signed in as (existing, link). */
  user: { id: string; email: string; name: string } | null;
  profile: { subject: string; email: string | null; emailVerified: boolean; name: string | null; groups: string[]; groupCount: number } | null;
}

/** `GET /api/admin/providers/{id}/tests/{testId}`: a test sign-in's result (it never changes). */
export function getProviderTest(providerId: string, testId: string, { signal }: { signal?: AbortSignal } = {}): Promise<ProviderTestResult> {
  return apiClient.get<ProviderTestResult>(apiPaths.admin.providerTest(providerId, testId), signal ? { signal } : {});
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
