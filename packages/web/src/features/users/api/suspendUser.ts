import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `POST /api/admin/users/{id}/suspend` (204): the user may not sign in, and every session of theirs ends now. */
export function suspendUser(userId: string) {
  return callApi(routes.admin.suspendUser, { params: { userId } });
}

export function useSuspendUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: suspendUser,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
