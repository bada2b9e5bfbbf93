import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { invalidateAfterUserChange } from '../utils/invalidateAfterUserChange';

export interface SetUserAdminInput {
  userId: string;
  admin: boolean;
}

/**
 * `PUT /api/admin/users/{id}/admin` with `{ admin }` (204): grants or removes the admin role.
 * 409 `admin_from_config` when the role comes from the config file; 409 `last_admin` when removing it
 * would leave nobody to administer Gatehouse.
 */
export function setUserAdmin({ userId, admin }: SetUserAdminInput): Promise<void> {
  return apiClient.put<void>(apiPaths.admin.userAdmin(userId), { admin });
}

export function useSetUserAdmin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: setUserAdmin,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
