/**
 * A request's free text (a user agent) as a text column keeps it on either database: without NUL
 * characters, which PostgreSQL's text refuses (SQLite would keep them), and cut to `max` characters.
 * Node's HTTP parser already refuses a NUL in a header; this keeps the store safe whatever it is given.
 */
export function storableText(value: string | undefined, max: number): string | null {
  return value === undefined ? null : value.replaceAll('\u0000', '').slice(0, max);
}
