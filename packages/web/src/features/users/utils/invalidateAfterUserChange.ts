import type { QueryClient } from '@tanstack/react-query';
import { adminQueryKeys, sessionQueryKey } from '../../../lib/queryKeys';

/**
 * After any change to a user: everything the console shows may differ (the user, the list, the
 * dashboard's counts, the audit log that records the change), and so may the admin's own session
 * (their own role, or their own session revoked). Only the queries on screen refetch.
 */
export function invalidateAfterUserChange(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
    queryClient.invalidateQueries({ queryKey: sessionQueryKey }),
  ]);
}
