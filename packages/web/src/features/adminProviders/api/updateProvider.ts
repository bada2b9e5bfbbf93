import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AdminProvider, ProviderDefinition } from './getAdminProviders';

/**
 * `PUT /api/admin/providers/{id}` with the definition (no `enabled`; a credential left out is kept);
 * 409 `provider_from_config`, or `provider_in_use` when the issuer would change under linked identities.
 */
export function updateProvider(provider: Omit<ProviderDefinition, 'enabled'>): Promise<AdminProvider> {
  return apiClient.put<AdminProvider>(apiPaths.admin.provider(provider.id), provider);
}

export function useUpdateProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateProvider,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
