import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';

/** One enabled sign-in provider as `GET /api/providers` lists it. */
export interface SignInProvider {
  id: string;
  name: string;
  /** Server path that starts a sign-in (`/.gatehouse/sign-in/<id>`); reached by navigation with `?rd=`. */
  startUrl: string;
}

export interface ProvidersResponse {
  organization: { name: string };
  providers: SignInProvider[];
}

/** `GET /api/providers` (public): the organisation's name and every enabled provider. */
export async function getProviders({ signal }: { signal?: AbortSignal } = {}): Promise<ProvidersResponse> {
  const body = await apiClient.get<ProvidersResponse>(apiPaths.providers, signal ? { signal } : {});
  return { organization: body.organization, providers: Array.isArray(body.providers) ? body.providers : [] };
}

export const providersQueryOptions = () =>
  queryOptions({
    queryKey: ['providers'],
    queryFn: ({ signal }) => getProviders({ signal }),
    // Changes only when an admin edits providers; a few minutes of staleness is harmless.
    staleTime: 5 * 60_000,
  });

export function useProviders() {
  return useQuery(providersQueryOptions());
}
