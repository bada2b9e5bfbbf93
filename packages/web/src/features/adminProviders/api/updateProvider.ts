import { routes, type ProviderDefinition } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * `PUT /api/admin/providers/{id}` with the definition (no `enabled`; a credential left out is kept);
 * 409 `provider_from_config`, or `provider_in_use` when the issuer would change under linked identities.
 */
export function updateProvider(provider: ProviderDefinition) {
  return callApi(routes.admin.updateProvider, { params: { providerId: provider.id }, body: provider });
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
