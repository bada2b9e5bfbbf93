import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AppDefinition } from './getAdminApps';

/** `PUT /api/admin/apps/{id}` with the full definition; 409 `app_from_config` for apps from gatehouse.yaml. */
export function updateApp(app: AppDefinition) {
  return callApi(routes.admin.updateApp, { params: { appId: app.id }, body: { ...app } });
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
