import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths, withQuery } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { DEFAULT_RETURN_TO } from '../utils/returnTo';

/** One enabled sign-in provider as `GET /api/providers` lists it. */
export interface SignInProvider {
  id: string;
  name: string;
  /** Server path that starts a sign-in (`/.gatehouse/sign-in/<id>`); reached by navigation with `?rd=`. */
  startUrl: string;
}

/**
 * The server's verdict on the sign-in page's `rd`: where a sign-in started here returns to. The server
 * alone decides (it knows the app origins); the page links only to `href`, never to what it was given.
 */
export interface ReturnTo {
  /** A path on the portal, or a URL on a configured app's origin (the default when `rd` was refused). */
  href: string;
  /** The app's host when `href` is on an app (to name it in a link), else null. */
  host: string | null;
}

export interface ProvidersResponse {
  organization: { name: string };
  providers: SignInProvider[];
  returnTo: ReturnTo;
}

/** What the page falls back to when the server's answer has no verdict: the person's own account. */
const DEFAULT_VERDICT: ReturnTo = { href: DEFAULT_RETURN_TO, host: null };

/**
 * `GET /api/providers?rd=` (public): the organisation's name, every enabled provider, and the server's
 * verdict on `rd` (Threat: open redirect; one rule, on the server).
 */
export async function getProviders(rd: string | null, { signal }: { signal?: AbortSignal } = {}): Promise<ProvidersResponse> {
  const body = await apiClient.get<Partial<ProvidersResponse>>(withQuery(apiPaths.providers, { rd }), signal ? { signal } : {});
  const returnTo = body.returnTo && typeof body.returnTo.href === 'string' ? body.returnTo : DEFAULT_VERDICT;
  return {
    organization: body.organization ?? { name: '' },
    providers: Array.isArray(body.providers) ? body.providers : [],
    returnTo: { href: returnTo.href, host: typeof returnTo.host === 'string' ? returnTo.host : null },
  };
}

export const providersQueryOptions = (rd: string | null) =>
  queryOptions({
    queryKey: ['providers', rd],
    queryFn: ({ signal }) => getProviders(rd, { signal }),
    // Changes only when an admin edits providers or apps; a few minutes of staleness is harmless.
    staleTime: 5 * 60_000,
  });

export function useProviders(rd: string | null) {
  return useQuery(providersQueryOptions(rd));
}
