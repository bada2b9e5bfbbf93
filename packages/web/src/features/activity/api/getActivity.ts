import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** One event of this account, as `GET /api/me/activity` lists it. */
export interface ActivityEvent {
  id: string;
  /** ISO 8601. */
  time: string;
  /** `sign_in`, `sign_in_failed`, `sign_out`, `session_revoked`, ...; new types may appear at any time. */
  type: string;
  outcome: 'success' | 'failure';
  ip: string | null;
  userAgent: string | null;
  /** Depends on the type; read defensively. */
  details: Record<string, unknown>;
}

export interface ActivityResponse {
  /** Newest first, at most 20. */
  events: ActivityEvent[];
}

/** `GET /api/me/activity`: the latest events of the signed-in person's account. */
export async function getActivity({ signal }: { signal?: AbortSignal } = {}): Promise<ActivityResponse> {
  const body = await apiClient.get<ActivityResponse>(apiPaths.me.activity, signal ? { signal } : {});
  return { events: Array.isArray(body?.events) ? body.events : [] };
}

export const activityQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.activity,
    queryFn: ({ signal }) => getActivity({ signal }),
  });

export function useActivity() {
  return useQuery(activityQueryOptions());
}
