import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

/** Who may sign in, for every provider at once (each provider's own rules apply too). */
export interface SignInSettings {
  /** Email domains everyone must have; empty means any. */
  allowedDomains: string[];
  /** Whether people unknown to Gatehouse get a user on first sign-in (where their provider allows it too). */
  createUsers: boolean;
}

/** `GET /api/admin/sign-in-settings`. */
export function getSignInSettings({ signal }: { signal?: AbortSignal } = {}): Promise<SignInSettings> {
  return apiClient.get<SignInSettings>(apiPaths.admin.signInSettings, signal ? { signal } : {});
}

export const signInSettingsQueryOptions = () =>
  queryOptions({
    queryKey: adminQueryKeys.signInSettings,
    queryFn: ({ signal }) => getSignInSettings({ signal }),
  });

export function useSignInSettings() {
  return useQuery(signInSettingsQueryOptions());
}
