import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `DELETE /api/admin/sessions/{id}` (204): ends anyone's session; that browser is signed out at its next request. */
export function revokeUserSession(sessionId: string): Promise<void> {
  return apiClient.delete<void>(apiPaths.admin.session(sessionId));
}

export function useRevokeUserSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeUserSession,
    // Also after a failure: a 404 means the list is out of date.
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
