import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `DELETE /api/admin/sessions/{id}` (204): ends anyone's session; that browser is signed out at its next request. */
export function revokeUserSession(sessionId: string) {
  return callApi(routes.admin.revokeSession, { params: { sessionId } });
}

export function useRevokeUserSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeUserSession,
    // Also after a failure: a 404 means the list is out of date.
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
