import { describe, expect, it } from 'vitest';
import { formatDateTime } from './formatDateTime';

describe('formatDateTime', () => {
  it('formats an ISO timestamp in the given locale and time zone', () => {
    expect(formatDateTime('2026-03-12T14:05:00.000Z', { locale: 'en-GB', timeZone: 'UTC' })).toBe('12 Mar 2026, 14:05');
    expect(formatDateTime('2026-03-12T14:05:00.000Z', { locale: 'en-US', timeZone: 'America/New_York' })).toBe(
      'Mar 12, 2026, 10:05 AM',
    );
  });

  it('returns undefined for a value that is not a date', () => {
    expect(formatDateTime('not a date')).toBeUndefined();
    expect(formatDateTime('')).toBeUndefined();
  });
});
