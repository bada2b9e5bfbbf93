import { routes, type ProviderDefinition } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * `POST /api/admin/providers` (201 with the provider); 400 names each bad field in `detail`; the issuer
 * must answer discovery (`issuer_unreachable`, `issuer_invalid`, `pkce_unsupported`).
 */
export function createProvider(provider: ProviderDefinition) {
  return callApi(routes.admin.createProvider, { body: { ...provider } });
}

export function useCreateProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createProvider,
    // Not awaited: the page moves on at once, and only the queries still on screen refetch.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
