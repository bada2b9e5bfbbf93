import { routes, type ResponseOf } from '@gatehouse/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';

/** The identities linked to this account, and the enabled providers it has no identity with yet. */
export type IdentitiesResponse = ResponseOf<typeof routes.me.getMyIdentities>;

/** `GET /api/me/identities`: the identities linked to this account, and the providers that could be. */
export function getIdentities({ signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.me.getMyIdentities, { signal });
}

export const identitiesQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.identities,
    queryFn: ({ signal }) => getIdentities({ signal }),
  });

export function useIdentities() {
  return useQuery(identitiesQueryOptions());
}
