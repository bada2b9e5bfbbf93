import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** `POST /api/me/sessions/revoke-others`: "Sign out everywhere else"; this session stays. Answers how many ended. */
export function revokeOtherSessions() {
  return callApi(routes.me.revokeOtherSessions);
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
