import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `POST /api/admin/users/{id}/reactivate` (204): a suspended user may sign in again. */
export function reactivateUser(userId: string): Promise<void> {
  return apiClient.post<void>(apiPaths.admin.reactivateUser(userId));
}

export function useReactivateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: reactivateUser,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
