import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AdminProvider } from './getAdminProviders';

/**
 * `POST /api/admin/providers/{id}/enable` or `/disable`. Turning one off signs out whoever signed in with
 * it; `self_lockout` when that would be the admin asking.
 */
export function setProviderEnabled({ providerId, enabled }: { providerId: string; enabled: boolean }): Promise<AdminProvider> {
  return apiClient.post<AdminProvider>(enabled ? apiPaths.admin.enableProvider(providerId) : apiPaths.admin.disableProvider(providerId));
}

export function useSetProviderEnabled() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: setProviderEnabled,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
