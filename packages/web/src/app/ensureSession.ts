import { pages, type CurrentSession } from '@gatehouse/contract';
import type { QueryClient } from '@tanstack/react-query';
import { redirect } from 'react-router';
import { sessionQueryOptions } from '../features/auth/api/getSession';
import { isUnauthenticated } from '../lib/apiClient';

/**
 * Loader step for pages that need a session: resolves it (from the cache when present), or sends the
 * browser to the sign-in page with the page's own path as the return-to. Any other failure (server
 * down, 500) is thrown on to the route's error boundary.
 */
export async function ensureSession(
  queryClient: QueryClient,
  request: Request,
  signInHref: (returnTo: string) => string = pages.signIn.href,
): Promise<CurrentSession> {
  try {
    return await queryClient.ensureQueryData(sessionQueryOptions());
  } catch (error) {
    if (isUnauthenticated(error)) {
      const url = new URL(request.url);
      // react-router's way to redirect from a loader is to throw the Response `redirect()` makes.
      throw redirect(signInHref(url.pathname + url.search));
    }
    throw error;
  }
}
