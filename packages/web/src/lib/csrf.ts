import { queryOptions, useQuery } from '@tanstack/react-query';
import { getCsrfToken } from './apiClient';

/**
 * The CSRF token for HTML form posts (the hidden `csrf_token` field), e.g. the sign-out form.
 * Fetch calls need nothing from here: `callApi` adds the `X-CSRF-Token` header itself.
 */
export const csrfTokenQueryOptions = () =>
  queryOptions({
    queryKey: ['csrf-token'],
    queryFn: () => getCsrfToken(),
    // Bound to the session, which a full page load replaces; refetching would only return the same value.
    staleTime: Infinity,
    gcTime: Infinity,
  });

export function useCsrfToken() {
  return useQuery(csrfTokenQueryOptions());
}
