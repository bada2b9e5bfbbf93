import { routes, type MyIdentity } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/**
 * `DELETE /api/me/identities/{id}` (204): that provider no longer signs in to this account.
 * 409 `last_identity` for the only one left (the UI does not offer it), 404 when it is already gone.
 */
export function unlinkIdentity(identityId: string) {
  return callApi(routes.me.unlinkMyIdentity, { params: { identityId } });
}

/**
 * Unlinks an identity, then refreshes the list and the activity that now records it. Not after
 * unlinking the identity this session signed in with: the server ended the session with it, so those
 * would only answer 401, and the caller takes the person to sign in instead.
 */
export function useUnlinkIdentity() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (identity: MyIdentity) => unlinkIdentity(identity.id),
    onSettled: (_data, error, identity) =>
      !error && identity.current
        ? undefined
        : Promise.all([
            queryClient.invalidateQueries({ queryKey: meQueryKeys.identities }),
            queryClient.invalidateQueries({ queryKey: meQueryKeys.activity }),
          ]),
  });
}
