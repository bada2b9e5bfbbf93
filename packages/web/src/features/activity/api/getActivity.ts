import { routes } from '@gatehouse/contract';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** Events per page of "Recent activity": a short list that pages, rather than one that keeps growing. */
export const ACTIVITY_PAGE_SIZE = 10;

/** `GET /api/me/activity?page=`: a page of the signed-in person's account events, newest first, and how many there are. */
export function getActivity({ page = 1, signal }: { page?: number; signal?: AbortSignal } = {}) {
  return callApi(routes.me.getMyActivity, { query: { page, pageSize: ACTIVITY_PAGE_SIZE }, signal });
}

// Under meQueryKeys.activity, so a change that writes a line (revoking a session) refreshes every page.
export const activityQueryOptions = (page = 1) =>
  queryOptions({
    queryKey: [...meQueryKeys.activity, page],
    queryFn: ({ signal }) => getActivity({ page, signal }),
    // The page on screen stays while the next one loads: the list does not jump.
    placeholderData: keepPreviousData,
  });

export function useActivity(page = 1) {
  return useQuery(activityQueryOptions(page));
}
