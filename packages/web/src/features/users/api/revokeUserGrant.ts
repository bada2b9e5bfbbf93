import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

/** `DELETE /api/admin/grants/{grantId}` (204): signs the user out of one app signed in with Gatehouse (404 when it has ended). */
export function revokeUserGrant(grantId: string) {
  return callApi(routes.admin.revokeGrant, { params: { grantId } });
}

export function useRevokeUserGrant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeUserGrant,
    // Also after a failure: a 404 means the list is out of date.
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
