import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `DELETE /api/admin/providers/{id}` (204); 409 `provider_in_use` while identities are linked to it. */
export function deleteProvider(providerId: string) {
  return callApi(routes.admin.deleteProvider, { params: { providerId } });
}

export function useDeleteProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteProvider,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
