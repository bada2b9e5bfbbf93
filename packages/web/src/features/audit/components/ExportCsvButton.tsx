import { Button } from '@mantine/core';
import { IconFileDownload } from '@tabler/icons-react';
import type { AuditFilters } from '../api/getAuditLog';
import { auditCsvHref } from '../utils/auditFilters';

/**
 * "Export CSV": a plain link to `/api/admin/audit.csv` with the filters in effect, so the browser
 * downloads it with the session cookie (a GET needs no CSRF token) and no fetch holds it in memory.
 */
export function ExportCsvButton({ filters }: { filters: AuditFilters }) {
  return (
    <Button component="a" href={auditCsvHref(filters)} download variant="default" leftSection={<IconFileDownload size={18} aria-hidden />}>
      Export CSV
    </Button>
  );
}
