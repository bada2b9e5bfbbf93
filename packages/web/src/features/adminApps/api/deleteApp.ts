import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `DELETE /api/admin/apps/{id}` (204); 409 `app_from_config` for apps from gatehouse.yaml. */
export function deleteApp(appId: string): Promise<void> {
  return apiClient.delete<void>(apiPaths.admin.app(appId));
}

export function useDeleteApp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteApp,
    // Not awaited: the page moves on at once, and only the queries still on screen refetch.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
