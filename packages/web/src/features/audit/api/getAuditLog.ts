import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths, withQuery } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';
import type { AuditEvent } from '../../../types/api';

export type AuditOutcome = 'success' | 'failure';

/** What the audit log is narrowed to; '' means "any". The names are the API's query parameters. */
export interface AuditFilters {
  type: string;
  userId: string;
  outcome: AuditOutcome | '';
  /** ISO 8601, inclusive bounds. */
  from: string;
  to: string;
}

export interface AuditQuery extends AuditFilters {
  /** 1-based. */
  page: number;
  pageSize: number;
}

export interface AuditPage {
  /** Newest first. */
  events: AuditEvent[];
  total: number;
  page: number;
  pageSize: number;
}

/** `GET /api/admin/audit?type=&userId=&outcome=&from=&to=&page=&pageSize=` */
export async function getAuditLog(params: AuditQuery, { signal }: { signal?: AbortSignal } = {}): Promise<AuditPage> {
  const url = withQuery(apiPaths.admin.audit, { ...params });
  const body = await apiClient.get<Partial<AuditPage>>(url, signal ? { signal } : {});
  const events = Array.isArray(body?.events) ? body.events : [];
  return {
    events,
    total: typeof body?.total === 'number' ? body.total : events.length,
    page: typeof body?.page === 'number' ? body.page : params.page,
    pageSize: typeof body?.pageSize === 'number' ? body.pageSize : params.pageSize,
  };
}

export const auditLogQueryOptions = (params: AuditQuery) =>
  queryOptions({
    queryKey: adminQueryKeys.audit(params),
    queryFn: ({ signal }) => getAuditLog(params, { signal }),
    // The previous page stays on screen (marked busy) while the next one loads.
    placeholderData: keepPreviousData,
  });

export function useAuditLog(params: AuditQuery) {
  return useQuery(auditLogQueryOptions(params));
}
