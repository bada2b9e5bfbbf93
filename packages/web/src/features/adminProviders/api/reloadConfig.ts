import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * `POST /api/admin/config/reload`: the server reads gatehouse.yaml again and applies it, or refuses it
 * whole (`config_invalid`, the problems in its detail).
 */
export function reloadConfig() {
  return callApi(routes.admin.reloadConfig);
}

export function useReloadConfig() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: reloadConfig,
    // Providers, apps and admins may all have changed.
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
  });
}
