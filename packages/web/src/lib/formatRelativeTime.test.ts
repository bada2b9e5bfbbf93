import { describe, expect, it } from 'vitest';
import { formatRelativeTime } from './formatRelativeTime';

const now = Date.parse('2026-03-12T14:00:00.000Z');
const at = (offsetMs: number) => new Date(now + offsetMs).toISOString();
const relative = (offsetMs: number) => formatRelativeTime(at(offsetMs), { now, locale: 'en' });

describe('formatRelativeTime', () => {
  it('says "just now" for the last minute, and for a timestamp slightly in the future (clock skew)', () => {
    expect(relative(0)).toBe('just now');
    expect(relative(-59_000)).toBe('just now');
    expect(relative(20_000)).toBe('just now');
  });

  it('counts whole minutes, hours and days', () => {
    expect(relative(-60_000)).toBe('1 minute ago');
    expect(relative(-5 * 60_000 - 30_000)).toBe('5 minutes ago');
    expect(relative(-2 * 3_600_000 - 59 * 60_000)).toBe('2 hours ago');
    expect(relative(-24 * 3_600_000)).toBe('yesterday');
    expect(relative(-3 * 24 * 3_600_000)).toBe('3 days ago');
    expect(relative(3 * 3_600_000)).toBe('in 3 hours');
  });

  it('gives up beyond 30 days, and on values that are not dates', () => {
    expect(relative(-31 * 24 * 3_600_000)).toBeUndefined();
    expect(formatRelativeTime('yesterday-ish', { now })).toBeUndefined();
  });
});
