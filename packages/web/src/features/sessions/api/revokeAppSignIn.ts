import { routes } from '@gatehouse/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/**
 * `DELETE /api/me/grants/{grantId}` (204): "Sign out of <app>": ends that app's sign-in with Gatehouse
 * (its tokens stop working). 404 when it has ended already.
 */
export function revokeAppSignIn(grantId: string) {
  return callApi(routes.me.revokeMyAppSignIn, { params: { grantId } });
}

/** Ends an app's sign-in, then refreshes the sessions (which list it) and the activity that now records it. */
export function useRevokeAppSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeAppSignIn,
    onSettled: () =>
      // Also after a failure: a 404 means the list is out of date.
      Promise.all([
        queryClient.invalidateQueries({ queryKey: meQueryKeys.sessions }),
        queryClient.invalidateQueries({ queryKey: meQueryKeys.activity }),
      ]),
  });
}
