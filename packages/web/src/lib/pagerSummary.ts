const numbers = new Intl.NumberFormat();

/**
 * What a pager says about the list: "Showing 51–100 of 1,234 users" when there are more pages, and
 * plainly "1 event", "12 events", "No users" when everything is on this one.
 */
export function pagerSummary({ page, pageSize, total, noun, one }: { page: number; pageSize: number; total: number; noun: string; one: string }): string {
  if (total === 0) return `No ${noun}`;
  if (total <= pageSize) return `${numbers.format(total)} ${total === 1 ? one : noun}`;
  const first = (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  return `Showing ${numbers.format(first)}–${numbers.format(last)} of ${numbers.format(total)} ${noun}`;
}
