import { routes } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** `GET /api/me/activity`: the latest events of the signed-in person's account, newest first. */
export function getActivity({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.me.getMyActivity, { signal });
}

export const activityQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.activity,
    queryFn: ({ signal }) => getActivity({ signal }),
  });

export function useActivity() {
  return useQuery(activityQueryOptions());
}
