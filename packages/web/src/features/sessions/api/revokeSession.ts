import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/**
 * `DELETE /api/me/sessions/{id}` (204): ends one of this person's other sessions; that browser is signed
 * out at its next request. The current session is never revoked this way (that is "Sign out").
 * 404 when the session is unknown or already over.
 */
export function revokeSession(sessionId: string) {
  return callApi(routes.me.revokeMySession, { params: { sessionId } });
}

/** Revokes a session, then refreshes the list and the activity that now records it. */
export function useRevokeSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeSession,
    onSettled: () =>
      // Also after a failure: a 404 means the list is out of date.
      Promise.all([
        queryClient.invalidateQueries({ queryKey: meQueryKeys.sessions }),
        queryClient.invalidateQueries({ queryKey: meQueryKeys.activity }),
      ]),
  });
}
