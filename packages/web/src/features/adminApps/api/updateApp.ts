import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AdminApp, AppDefinition } from './getAdminApps';

/** `PUT /api/admin/apps/{id}` with the full definition; 409 `app_from_config` for apps from gatehouse.yaml. */
export function updateApp(app: AppDefinition): Promise<AdminApp> {
  return apiClient.put<AdminApp>(apiPaths.admin.app(app.id), app);
}

export function useUpdateApp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateApp,
    // Not awaited: the page moves on at once, and only the queries still on screen refetch.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
