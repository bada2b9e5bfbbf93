import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { meQueryKeys } from '../../../lib/queryKeys';
import type { Device, ProviderRef } from '../../../types/api';

export type { Device, DeviceType } from '../../../types/api';

/** One active session of the signed-in person, as `GET /api/me/sessions` lists it. */
export interface MySession {
  /** The session's public handle, never the cookie value. */
  id: string;
  /** The session this page is using. */
  current: boolean;
  /** ISO 8601 timestamps. */
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
  device: Device;
  /** The provider this session signed in with. */
  provider: ProviderRef;
}

export interface MySessionsResponse {
  /** Most recently active first. */
  sessions: MySession[];
}

/** `GET /api/me/sessions`: the signed-in person's active sessions, most recently active first. */
export async function getMySessions({ signal }: { signal?: AbortSignal } = {}): Promise<MySessionsResponse> {
  const body = await apiClient.get<MySessionsResponse>(apiPaths.me.sessions, signal ? { signal } : {});
  return { sessions: Array.isArray(body?.sessions) ? body.sessions : [] };
}

export const mySessionsQueryOptions = () =>
  queryOptions({
    queryKey: meQueryKeys.sessions,
    queryFn: ({ signal }) => getMySessions({ signal }),
    // Refetched whenever the window regains focus, fresh or not: a session revoked on another device (or
    // expired) should be gone from the list the moment the person looks again.
    refetchOnWindowFocus: 'always',
  });

export function useMySessions() {
  return useQuery(mySessionsQueryOptions());
}
