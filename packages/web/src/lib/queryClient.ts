import { MutationCache, QueryCache, QueryClient, type QueryKey } from '@tanstack/react-query';
import { isApiError, isUnauthenticated, NETWORK_ERROR_STATUS } from './apiClient';

const MAX_RETRIES = 2;

/**
 * Retries only what may heal by itself: a lost connection or a 5xx. A 4xx answer (not signed in, not
 * allowed, rate limited) will say the same thing again, and retrying a 401 only delays the redirect.
 */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= MAX_RETRIES) return false;
  if (!isApiError(error)) return false;
  return error.status === NETWORK_ERROR_STATUS || error.status >= 500;
}

export interface QueryClientOptions {
  /**
   * Called when any query (with its key) or mutation (without) is answered 401: the session ended
   * while the page was open (revoked from another device, expired). The app uses it to re-check the
   * session, which sends the person to sign in instead of leaving an error in one section of a page.
   */
  onUnauthenticated?: (queryKey: QueryKey | undefined) => void;
}

export function createQueryClient({ onUnauthenticated }: QueryClientOptions = {}): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({
      onError: (error, query) => {
        if (isUnauthenticated(error)) onUnauthenticated?.(query.queryKey);
      },
    }),
    mutationCache: new MutationCache({
      onError: (error) => {
        if (isUnauthenticated(error)) onUnauthenticated?.(undefined);
      },
    }),
    defaultOptions: {
      queries: {
        retry: shouldRetry,
        staleTime: 30_000,
      },
      mutations: {
        retry: false,
      },
    },
  });
}

/**
 * The `onUnauthenticated` the app uses: any 401 means the session is over (revoked, expired, its
 * identity unlinked), so what the cache holds about it is stale and no page may go on showing "signed
 * in as …". Resetting drops that data (a refetch that fails would keep it beside the error) and
 * refetches the session where it is shown, so RequireSession takes the person to sign in. The session
 * check's own 401 resets only while it still holds data, or it would loop.
 */
export function dropSessionOnUnauthenticated(getClient: () => QueryClient, sessionKey: QueryKey): (queryKey: QueryKey | undefined) => void {
  return (queryKey) => {
    const client = getClient();
    if (queryKey?.[0] === sessionKey[0] && client.getQueryData(sessionKey) === undefined) return;
    void client.resetQueries({ queryKey: sessionKey });
  };
}
