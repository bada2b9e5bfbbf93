import { DEFAULT_RETURN_TO, routes, type ProvidersResponse, type ReturnTo } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';

/** What the page falls back to when the server's answer has no verdict: the person's own account. */
const DEFAULT_VERDICT: ReturnTo = { href: DEFAULT_RETURN_TO, host: null, appName: null };

/**
 * `GET /api/providers?rd=` (public): the organisation's name, every enabled provider, and the server's
 * verdict on `rd` (Threat: open redirect; one rule, on the server).
 */
export async function getProviders(rd: string | null, { signal }: { signal?: AbortSignal } = {}): Promise<ProvidersResponse> {
  const body = await callApi(routes.session.getProviders, { query: { rd: rd ?? undefined }, signal });
  return { ...body, returnTo: body.returnTo ?? DEFAULT_VERDICT };
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
