import { formatDateTime } from '../lib/formatDateTime';
import { formatRelativeTime } from '../lib/formatRelativeTime';

export interface DateTimeProps {
  /** ISO 8601 timestamp from the API. */
  value: string;
  /**
   * "5 minutes ago" instead of the date, when the value is within a month; the date and time stay in
   * the tooltip. Recomputed on each render (the sections re-render when their data refetches).
   */
  relative?: boolean;
}

/** An API timestamp for people, with the exact ISO value kept machine-readable in `<time dateTime>`. */
export function DateTime({ value, relative = false }: DateTimeProps) {
  const absolute = formatDateTime(value);
  if (relative) {
    const text = formatRelativeTime(value);
    if (text) {
      return (
        <time dateTime={value} title={absolute ?? value}>
          {text}
        </time>
      );
    }
  }
  return (
    <time dateTime={value} title={value}>
      {absolute ?? value}
    </time>
  );
}
