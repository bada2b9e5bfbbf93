import type { Dashboard, DashboardRange } from '@gatehouse/contract';

export const DEFAULT_RANGE: DashboardRange = '24h';

export const RANGE_OPTIONS: ReadonlyArray<{ value: DashboardRange; label: string; period: string }> = [
  { value: '24h', label: '24 h', period: 'the last 24 hours' },
  { value: '7d', label: '7 days', period: 'the last 7 days' },
];

/** The `?range=` of the dashboard's address; anything else is the default. */
export function parseRange(value: string | null | undefined): DashboardRange {
  return value === '7d' || value === '24h' ? value : DEFAULT_RANGE;
}

export function rangePeriod(range: DashboardRange): string {
  return RANGE_OPTIONS.find((option) => option.value === range)?.period ?? range;
}

interface FormatOptions {
  locale?: string;
  timeZone?: string;
}

/** A bucket's start as an axis label: "14:00" (or "2:00 PM") for an hour, "Thu 12 Mar" for a day (the reader's locale and time zone). */
export function bucketLabel(start: string, range: DashboardRange, { locale, timeZone }: FormatOptions = {}): string {
  const date = new Date(start);
  if (Number.isNaN(date.getTime())) return start;
  const zone = timeZone ? { timeZone } : {};
  const format =
    range === '24h'
      ? new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', ...zone })
      : new Intl.DateTimeFormat(locale, { weekday: 'short', day: 'numeric', month: 'short', ...zone });
  return format.format(date);
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/**
 * The chart in one or two sentences, for its caption (and so for screen readers): the totals, and the
 * busiest bucket. "Over the last 24 hours: 12 sign-ins, 3 failed sign-ins and 1 denial. Most sign-ins:
 * 5 at 14:00."
 */
export function summariseActivity(dashboard: Pick<Dashboard, 'range' | 'buckets' | 'totals'>, options: FormatOptions = {}): string {
  const { range, buckets, totals } = dashboard;
  const head = `Over ${rangePeriod(range)}: ${plural(totals.signIns, 'sign-in', 'sign-ins')}, ${plural(totals.failures, 'failed sign-in', 'failed sign-ins')} and ${plural(totals.denials, 'denial', 'denials')}.`;
  const busiest = buckets.reduce<(typeof buckets)[number] | undefined>((best, bucket) => (bucket.signIns > (best?.signIns ?? 0) ? bucket : best), undefined);
  if (!busiest) return head;
  return `${head} Most sign-ins: ${busiest.signIns.toLocaleString('en')} ${range === '24h' ? 'at' : 'on'} ${bucketLabel(busiest.start, range, options)}.`;
}
