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
