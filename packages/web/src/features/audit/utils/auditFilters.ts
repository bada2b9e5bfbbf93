import { auditEventTypes, isAuditEventType, routes, urlOf, type AuditEventType, type QueryOf } from '@gatehouse/contract';
import type { AuditFilters, AuditQuery } from '../api/getAuditLog';
import { AUDIT_EVENT_LABELS } from './describeAuditEvent';

export const AUDIT_PAGE_SIZE = 50;

/** The filter's choices: every type the server records, in the contract's order, in the console's words. */
export const AUDIT_EVENT_TYPES: ReadonlyArray<{ value: AuditEventType; label: string }> = auditEventTypes.map((value) => ({ value, label: AUDIT_EVENT_LABELS[value] }));

export const OUTCOME_OPTIONS: ReadonlyArray<{ value: AuditFilters['outcome']; label: string }> = [
  { value: '', label: 'Any outcome' },
  { value: 'success', label: 'Success' },
  { value: 'failure', label: 'Failure' },
];

export const EMPTY_AUDIT_FILTERS: AuditFilters = { type: '', userId: '', outcome: '', from: '', to: '' };

function isDate(value: string): boolean {
  return !Number.isNaN(new Date(value).getTime());
}

function parsePage(value: string | null): number {
  if (!value || !/^\d{1,6}$/.test(value)) return 1;
  return Math.max(1, Number(value));
}

/** The audit page's address (`?type=&userId=&outcome=&from=&to=&page=`) as what to ask the server. */
export function readAuditQuery(search: URLSearchParams): AuditQuery {
  const type = (search.get('type') ?? '').trim();
  const outcome = search.get('outcome');
  const from = search.get('from') ?? '';
  const to = search.get('to') ?? '';
  return {
    // Only a type the server records: the API refuses any other name (as it would a made-up outcome).
    type: isAuditEventType(type) ? type : '',
    // An id or an email (the server looks the email up).
    userId: (search.get('userId') ?? '').trim().slice(0, 254),
    outcome: outcome === 'success' || outcome === 'failure' ? outcome : '',
    from: from && isDate(from) ? from : '',
    to: to && isDate(to) ? to : '',
    page: parsePage(search.get('page')),
    pageSize: AUDIT_PAGE_SIZE,
  };
}

/** The filters as query values (empty ones left out): the page's address, the API's and the CSV link's. */
export function auditFilterValues(filters: AuditFilters): QueryOf<typeof routes.admin.exportAuditCsv> {
  return {
    type: filters.type || undefined,
    userId: filters.userId || undefined,
    outcome: filters.outcome || undefined,
    from: filters.from || undefined,
    to: filters.to || undefined,
  };
}

export function hasAuditFilters(filters: AuditFilters): boolean {
  return Object.values(auditFilterValues(filters)).some((value) => value !== undefined);
}

/** `GET /api/admin/audit.csv` with the same filters (every page, so no page number). */
export function auditCsvHref(filters: AuditFilters): string {
  return urlOf(routes.admin.exportAuditCsv, undefined, auditFilterValues(filters));
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO timestamp as an `<input type="datetime-local">` value in the browser's time zone ("2026-03-12T14:05"). */
export function toDateTimeLocal(iso: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The other way: a `datetime-local` value (the browser's time zone) as ISO 8601, or '' when empty or incomplete. */
export function fromDateTimeLocal(value: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!match) return '';
  const [, y, mo, d, h, mi, s] = match;
  const date = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
