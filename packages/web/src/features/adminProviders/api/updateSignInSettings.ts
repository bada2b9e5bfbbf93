import { routes, type SignInSettings } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** `PUT /api/admin/sign-in-settings`; 409 `self_lockout` when the admin's own domain would be left out. */
export function updateSignInSettings(settings: SignInSettings) {
  return callApi(routes.admin.updateSignInSettings, { body: settings });
}

export function useUpdateSignInSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateSignInSettings,
    onSuccess: (saved) => {
      queryClient.setQueryData(adminQueryKeys.signInSettings, saved);
      void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all });
    },
  });
}
