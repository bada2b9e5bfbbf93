const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const cache = new Map<string, Intl.RelativeTimeFormat>();

function formatter(locale: string | undefined): Intl.RelativeTimeFormat {
  const key = locale ?? '';
  let format = cache.get(key);
  if (!format) {
    format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
    cache.set(key, format);
  }
  return format;
}

/**
 * A recent timestamp from the API as people say it: "just now", "5 minutes ago", "yesterday",
 * "in 3 hours". Returns undefined for a value that is not a date, and for anything more than 30 days
 * away, where a date says more than "5 weeks ago" (the caller shows `formatDateTime` instead).
 * A timestamp a little ahead of this machine's clock (clock skew) still reads "just now".
 * `now` and `locale` default to the browser's; tests pin them.
 */
export function formatRelativeTime(iso: string, options: { now?: number; locale?: string } = {}): string | undefined {
  const time = new Date(iso).getTime();
  if (Number.isNaN(time)) return undefined;
  const diff = time - (options.now ?? Date.now());
  const distance = Math.abs(diff);
  if (distance < MINUTE) return 'just now';
  if (distance > 30 * DAY) return undefined;
  const format = formatter(options.locale);
  if (distance < HOUR) return format.format(Math.trunc(diff / MINUTE), 'minute');
  if (distance < DAY) return format.format(Math.trunc(diff / HOUR), 'hour');
  return format.format(Math.trunc(diff / DAY), 'day');
}
