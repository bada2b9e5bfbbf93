import { formatDateTime } from '../lib/formatDateTime';

/** An API timestamp for people, with the exact ISO value kept machine-readable in `<time dateTime>`. */
export function DateTime({ value }: { value: string }) {
  return (
    <time dateTime={value} title={value}>
      {formatDateTime(value) ?? value}
    </time>
  );
}
