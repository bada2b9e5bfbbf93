import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
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
export function setUserAdmin({ userId, admin }: SetUserAdminInput) {
  return callApi(routes.admin.setUserAdmin, { params: { userId }, body: { admin } });
}

export function useSetUserAdmin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: setUserAdmin,
    onSettled: () => invalidateAfterUserChange(queryClient),
  });
}
