import { QueryClient } from '@tanstack/react-query';
import { isApiError, NETWORK_ERROR_STATUS } from './apiClient';

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

export function createQueryClient(): QueryClient {
  return new QueryClient({
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
