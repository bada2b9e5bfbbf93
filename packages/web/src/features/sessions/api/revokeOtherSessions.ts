import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

export interface RevokeOtherSessionsResponse {
  /** How many sessions ended. */
  revoked: number;
}

/** `POST /api/me/sessions/revoke-others`: "Sign out everywhere else"; this session stays. */
export async function revokeOtherSessions(): Promise<RevokeOtherSessionsResponse> {
  const body = await apiClient.post<RevokeOtherSessionsResponse>(apiPaths.me.revokeOtherSessions, {});
  return { revoked: typeof body?.revoked === 'number' ? body.revoked : 0 };
}

export function useRevokeOtherSessions() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeOtherSessions,
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: meQueryKeys.sessions }),
        queryClient.invalidateQueries({ queryKey: meQueryKeys.activity }),
      ]),
  });
}
