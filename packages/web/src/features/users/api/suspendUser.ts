import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `POST /api/admin/users/{id}/suspend` (204): the user may not sign in, and every session of theirs ends now. */
export function suspendUser(userId: string): Promise<void> {
  return apiClient.post<void>(apiPaths.admin.suspendUser(userId));
}

export function useSuspendUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: suspendUser,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
