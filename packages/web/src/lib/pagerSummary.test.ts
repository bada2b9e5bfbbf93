import { describe, expect, it } from 'vitest';
import { pagerSummary } from './pagerSummary';

describe('pagerSummary', () => {
  const events = { noun: 'events', one: 'event', pageSize: 50 };
  it('reads naturally when everything is on one page', () => {
    expect(pagerSummary({ ...events, page: 1, total: 0 })).toBe('No events');
    expect(pagerSummary({ ...events, page: 1, total: 1 })).toBe('1 event');
    expect(pagerSummary({ ...events, page: 1, total: 12 })).toBe('12 events');
  });
  it('gives the range when there are more pages', () => {
    expect(pagerSummary({ ...events, page: 2, total: 1234 })).toBe(`Showing 51–100 of ${new Intl.NumberFormat().format(1234)} events`);
    expect(pagerSummary({ ...events, page: 3, total: 101 })).toBe('Showing 101–101 of 101 events');
  });
});
