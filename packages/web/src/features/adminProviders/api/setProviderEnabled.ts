import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * `POST /api/admin/providers/{id}/enable` or `/disable`. Turning one off signs out whoever signed in with
 * it; `self_lockout` when that would be the admin asking.
 */
export function setProviderEnabled({ providerId, enabled }: { providerId: string; enabled: boolean }) {
  return callApi(enabled ? routes.admin.enableProvider : routes.admin.disableProvider, { params: { providerId } });
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
