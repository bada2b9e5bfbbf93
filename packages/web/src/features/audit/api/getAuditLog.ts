import { routes, type AuditEvent, type AuditEventType } from '@gatehouse/contract';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

export type AuditOutcome = AuditEvent['outcome'];

/** What the audit log is narrowed to; '' means "any". The names are the API's query parameters. */
export interface AuditFilters {
  type: AuditEventType | '';
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

/** `GET /api/admin/audit?type=&userId=&outcome=&from=&to=&page=&pageSize=`: newest first. */
export function getAuditLog(params: AuditQuery, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.admin.listAuditEvents, { query: { ...params, outcome: params.outcome || undefined }, signal });
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
