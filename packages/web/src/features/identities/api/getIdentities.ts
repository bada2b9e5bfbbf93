import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';
import type { ProviderRef } from '../../../types/api';

/** One identity at a provider that signs in to this account. */
export interface LinkedIdentity {
  id: string;
  provider: ProviderRef;
  /** The provider's `sub` for this person. */
  subject: string;
  /** The email the provider gave, if any. */
  email: string | null;
  /** ISO 8601 timestamps. */
  linkedAt: string;
  lastUsedAt: string | null;
  /** The identity the current session signed in with. */
  current: boolean;
  /** The identity that created the account. */
  primary: boolean;
}

export interface IdentitiesResponse {
  identities: LinkedIdentity[];
  /** Enabled providers this person has no identity with yet. */
  linkable: ProviderRef[];
}

/** `GET /api/me/identities`: the identities linked to this account, and the providers that could be. */
export async function getIdentities({ signal }: { signal?: AbortSignal } = {}): Promise<IdentitiesResponse> {
  const body = await apiClient.get<IdentitiesResponse>(apiPaths.me.identities, signal ? { signal } : {});
  return {
    identities: Array.isArray(body?.identities) ? body.identities : [],
    linkable: Array.isArray(body?.linkable) ? body.linkable : [],
  };
}

export const identitiesQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.identities,
    queryFn: ({ signal }) => getIdentities({ signal }),
  });

export function useIdentities() {
  return useQuery(identitiesQueryOptions());
}
