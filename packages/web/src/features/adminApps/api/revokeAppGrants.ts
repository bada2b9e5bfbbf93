import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `POST /api/admin/apps/{appId}/grants/revoke-all`: "Sign everyone out of this app"; answers how many ended. */
export function revokeAppGrants(appId: string) {
  return callApi(routes.admin.revokeAppGrants, { params: { appId } });
}

export function useRevokeAppGrants() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeAppGrants,
    onSettled: () => queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
  });
}
