import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AuditEvent, Device, ProviderRef } from '../../../types/api';
import type { AdminUser } from './getUsers';

/** One identity at a provider that signs in to the user's account. */
export interface AdminIdentity {
  id: string;
  provider: ProviderRef;
  /** The provider's `sub`. */
  subject: string;
  email: string | null;
  /** ISO 8601. */
  linkedAt: string;
  lastUsedAt: string | null;
}

/** One of the user's active sessions. */
export interface AdminSession {
  /** The public handle, never the cookie value. */
  id: string;
  /** ISO 8601. */
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
  device: Device;
  provider: ProviderRef;
}

/** `GET /api/admin/users/{id}` */
export interface AdminUserDetail {
  user: AdminUser;
  identities: AdminIdentity[];
  sessions: AdminSession[];
  /** The user's audit trail, newest first. */
  events: AuditEvent[];
}

/** `GET /api/admin/users/{id}`: the user with identities, active sessions and audit trail (404 when unknown). */
export async function getUser(userId: string, { signal }: { signal?: AbortSignal } = {}): Promise<AdminUserDetail> {
  const body = await apiClient.get<AdminUserDetail>(apiPaths.admin.user(userId), signal ? { signal } : {});
  return {
    user: body.user,
    identities: Array.isArray(body.identities) ? body.identities : [],
    sessions: Array.isArray(body.sessions) ? body.sessions : [],
    events: Array.isArray(body.events) ? body.events : [],
  };
}

export const userQueryOptions = (userId: string) =>
  queryOptions({
    queryKey: adminQueryKeys.user(userId),
    queryFn: ({ signal }) => getUser(userId, { signal }),
    // Sessions come and go while an admin looks at them.
    refetchOnWindowFocus: 'always',
  });

export function useUser(userId: string) {
  return useQuery(userQueryOptions(userId));
}
