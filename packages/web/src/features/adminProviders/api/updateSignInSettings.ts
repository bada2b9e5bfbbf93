import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { SignInSettings } from './getSignInSettings';

/** `PUT /api/admin/sign-in-settings`; 409 `self_lockout` when the admin's own domain would be left out. */
export function updateSignInSettings(settings: SignInSettings): Promise<SignInSettings> {
  return apiClient.put<SignInSettings>(apiPaths.admin.signInSettings, settings);
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
