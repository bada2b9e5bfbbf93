import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/**
 * `POST /api/admin/providers/{id}/publish` `{ untested: true }`: offers a hidden provider to people
 * although no test sign-in with it passed (a passing test publishes it by itself).
 */
export function publishProvider(providerId: string) {
  return callApi(routes.admin.publishProvider, { params: { providerId }, body: { untested: true } });
}

export function usePublishProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: publishProvider,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
