import { describe, expect, it } from 'vitest';
import { bucketLabel, parseRange, summariseActivity } from './dashboardRange';

const utc = { locale: 'en-GB', timeZone: 'UTC' };

describe('parseRange', () => {
  it('accepts the two ranges and falls back to 24 hours', () => {
    expect(parseRange('7d')).toBe('7d');
    expect(parseRange('24h')).toBe('24h');
    expect(parseRange(null)).toBe('24h');
    expect(parseRange('30d')).toBe('24h');
  });
});

describe('bucketLabel', () => {
  it('shows the hour for 24 hours and the day for 7 days', () => {
    expect(bucketLabel('2026-03-12T14:00:00.000Z', '24h', utc)).toBe('14:00');
    expect(bucketLabel('2026-03-12T00:00:00.000Z', '7d', utc)).toBe('Thu 12 Mar');
    expect(bucketLabel('not a date', '24h', utc)).toBe('not a date');
  });
});

describe('summariseActivity', () => {
  it('gives the totals and the busiest bucket', () => {
    const summary = summariseActivity(
      {
        range: '24h',
        totals: { signIns: 12, failures: 1, denials: 0 },
        buckets: [
          { start: '2026-03-12T13:00:00.000Z', signIns: 2, failures: 0, denials: 0 },
          { start: '2026-03-12T14:00:00.000Z', signIns: 5, failures: 1, denials: 0 },
          { start: '2026-03-12T15:00:00.000Z', signIns: 5, failures: 0, denials: 0 },
        ],
      },
      utc,
    );
    expect(summary).toBe('Over the last 24 hours: 12 sign-ins, 1 failed sign-in and 0 denials. Most sign-ins: 5 at 14:00.');
  });

  it('says nothing of a busiest bucket when nobody signed in', () => {
    expect(summariseActivity({ range: '7d', totals: { signIns: 0, failures: 0, denials: 0 }, buckets: [] }, utc)).toBe(
      'Over the last 7 days: 0 sign-ins, 0 failed sign-ins and 0 denials.',
    );
  });
});
