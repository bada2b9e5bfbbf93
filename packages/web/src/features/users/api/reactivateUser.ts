import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `POST /api/admin/users/{id}/reactivate` (204): a suspended user may sign in again. */
export function reactivateUser(userId: string) {
  return callApi(routes.admin.reactivateUser, { params: { userId } });
}

export function useReactivateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: reactivateUser,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
