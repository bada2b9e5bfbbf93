import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/admin/sign-in-settings`: who may sign in, for every provider at once. */
export function getSignInSettings({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.getSignInSettings, { signal });
}

export const signInSettingsQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.signInSettings,
    queryFn: ({ signal }) => getSignInSettings({ signal }),
  });

export function useSignInSettings() {
  return useQuery(signInSettingsQueryOptions());
}
