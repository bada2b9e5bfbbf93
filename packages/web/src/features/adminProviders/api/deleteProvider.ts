import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `DELETE /api/admin/providers/{id}` (204); 409 `provider_in_use` while identities are linked to it. */
export function deleteProvider(providerId: string): Promise<void> {
  return apiClient.delete<void>(apiPaths.admin.provider(providerId));
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
