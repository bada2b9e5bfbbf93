import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AppDefinition } from './getAdminApps';

/** `POST /api/admin/apps` (201 with the app); 400 names each bad field in `detail`. */
export function createApp(app: AppDefinition) {
  return callApi(routes.admin.createApp, { body: { ...app } });
}

export function useCreateApp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createApp,
    // The list, the dashboard and the audit log (which records the change) may all differ now.
    // Not awaited: the page moves on at once, and only the queries still on screen refetch.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
