import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `DELETE /api/admin/apps/{id}` (204); 409 `app_from_config` for apps from gatehouse.yaml. */
export function deleteApp(appId: string) {
  return callApi(routes.admin.deleteApp, { params: { appId } });
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
