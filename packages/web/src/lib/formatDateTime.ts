const cache = new Map<string, Intl.DateTimeFormat>();

function formatter(locale: string | undefined, timeZone: string | undefined): Intl.DateTimeFormat {
  const key = `${locale ?? ''}|${timeZone ?? ''}`;
  let format = cache.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', ...(timeZone ? { timeZone } : {}) });
    cache.set(key, format);
  }
  return format;
}

/**
 * A timestamp from the API (ISO 8601) in the reader's words: "12 Mar 2026, 14:05" in their locale and
 * time zone. Returns undefined for a value that is not a date, so the caller can show it raw instead.
 * `locale` and `timeZone` default to the browser's; tests pin them.
 */
export function formatDateTime(iso: string, options: { locale?: string; timeZone?: string } = {}): string | undefined {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return undefined;
  return formatter(options.locale, options.timeZone).format(date);
}
