import { auditEventTypes } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import { AUDIT_EVENT_TYPES, auditCsvHref, fromDateTimeLocal, hasAuditFilters, readAuditQuery, toDateTimeLocal, EMPTY_AUDIT_FILTERS } from './auditFilters';

describe('readAuditQuery', () => {
  it('reads every filter and the page', () => {
    const query = readAuditQuery(
      new URLSearchParams('type=sign_in&userId=u_1&outcome=failure&from=2026-03-01T00:00:00.000Z&to=2026-03-02T00:00:00.000Z&page=2'),
    );
    expect(query).toEqual({
      type: 'sign_in',
      userId: 'u_1',
      outcome: 'failure',
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-02T00:00:00.000Z',
      page: 2,
      pageSize: 50,
    });
  });

  it('drops values it cannot use', () => {
    expect(readAuditQuery(new URLSearchParams('type=<script>&outcome=maybe&from=yesterday&page=x'))).toEqual({
      ...EMPTY_AUDIT_FILTERS,
      page: 1,
      pageSize: 50,
    });
  });
});

describe('the event type filter', () => {
  it('offers every type the server records, each in words', () => {
    expect(AUDIT_EVENT_TYPES.map((type) => type.value)).toEqual([...auditEventTypes]);
    for (const type of AUDIT_EVENT_TYPES) expect(type.label, type.value).not.toMatch(/_/);
  });

  // Threat: a crafted or stale link naming a type the server does not record (the API would refuse it,
  // 400): it is dropped like any other value the page cannot use, and the log shows every type.
  it.each(['policy_changed', 'SIGN_IN', 'sign_in_', '__proto__', 'constructor'])('drops the type %j from the address', (type) => {
    expect(readAuditQuery(new URLSearchParams({ type })).type).toBe('');
  });
});

describe('auditCsvHref', () => {
  it('carries the same filters, without the page', () => {
    expect(auditCsvHref(EMPTY_AUDIT_FILTERS)).toBe('/api/admin/audit.csv');
    expect(auditCsvHref({ ...EMPTY_AUDIT_FILTERS, type: 'sign_in', outcome: 'success' })).toBe('/api/admin/audit.csv?type=sign_in&outcome=success');
    expect(hasAuditFilters(EMPTY_AUDIT_FILTERS)).toBe(false);
    expect(hasAuditFilters({ ...EMPTY_AUDIT_FILTERS, userId: 'u' })).toBe(true);
  });
});

describe('datetime-local values', () => {
  it('go to ISO and back in the local time zone', () => {
    const iso = fromDateTimeLocal('2026-03-12T14:05');
    expect(iso).toBe(new Date(2026, 2, 12, 14, 5).toISOString());
    expect(toDateTimeLocal(iso)).toBe('2026-03-12T14:05');
  });

  it('give empty strings for empty or incomplete values', () => {
    expect(fromDateTimeLocal('')).toBe('');
    expect(fromDateTimeLocal('2026-03-12')).toBe('');
    expect(toDateTimeLocal('')).toBe('');
    expect(toDateTimeLocal('not a date')).toBe('');
  });
});
