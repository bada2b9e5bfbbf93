import { toSearchParams } from '@gatehouse/contract';
import { Stack } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useSearchParams, type LoaderFunctionArgs } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { PageTitle } from '../../components/PageTitle';
import { auditLogQueryOptions, type AuditFilters } from '../../features/audit/api/getAuditLog';
import { AuditFiltersBar } from '../../features/audit/components/AuditFiltersBar';
import { AuditLogResults } from '../../features/audit/components/AuditLogResults';
import { ExportCsvButton } from '../../features/audit/components/ExportCsvButton';
import { auditFilterValues, EMPTY_AUDIT_FILTERS, readAuditQuery } from '../../features/audit/utils/auditFilters';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(auditLogQueryOptions(readAuditQuery(new URL(request.url).searchParams)));
    return null;
  };

/** `/admin/audit[?type=&userId=&outcome=&from=&to=&page=]`: the audit log, filtered, paged and exportable. */
export default function AdminAuditRoute() {
  const [search, setSearch] = useSearchParams();
  const query = readAuditQuery(search);
  const { page: _page, pageSize: _pageSize, ...filters } = query;
  const go = (next: AuditFilters, page: number, replace: boolean) =>
    setSearch(toSearchParams({ ...auditFilterValues(next), page: page > 1 ? page : undefined }), { replace });

  return (
    <Stack gap="lg">
      <PageTitle title="Audit log" />
      <PageHeader
        title="Audit log"
        description="Every sign-in, sign-out, denial and admin action, newest first."
        actions={<ExportCsvButton filters={filters} />}
      />
      <AuditFiltersBar filters={filters} onChange={(next) => go(next, 1, true)} />
      <AuditLogResults
        query={query}
        onPageChange={(page) => {
          go(filters, page, false);
          window.scrollTo({ top: 0 });
        }}
        onClearFilters={() => go(EMPTY_AUDIT_FILTERS, 1, true)}
      />
    </Stack>
  );
}
