import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `DELETE /api/admin/grants/{grantId}` (204): signs one person out of one app signed in with Gatehouse (404 when it has ended). */
export function revokeGrant(grantId: string) {
  return callApi(routes.admin.revokeGrant, { params: { grantId } });
}

export function useRevokeGrant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeGrant,
    // Also after a failure: a 404 means the list is out of date. The audit log records it too.
    onSettled: () => queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
  });
}
