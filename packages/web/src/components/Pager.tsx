import { pagerSummary } from '../lib/pagerSummary';
import { Group, Pagination, Text } from '@mantine/core';

export interface PagerProps {
  /** 1-based. */
  page: number;
  pageSize: number;
  /** Items in all pages together. */
  total: number;
  onChange: (page: number) => void;
  /** What is counted, plural ("users", "events"). */
  noun: string;
  /** The same, singular ("user", "event"). */
  one: string;
}

/** "Showing 51–100 of 1,234 users" and the page buttons, each with a name a screen reader can read. */
export function Pager({ page, pageSize, total, onChange, noun, one }: PagerProps) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const labels = { first: 'First page', previous: 'Previous page', next: 'Next page', last: 'Last page' } as const;
  return (
    <Group justify="space-between" gap="sm">
      <Text size="sm" c="dimmed">
        {pagerSummary({ page, pageSize, total, noun, one })}
      </Text>
      {pages > 1 && (
        <nav aria-label={`Pages of ${noun}`}>
          <Pagination
            total={pages}
            value={Math.min(page, pages)}
            onChange={onChange}
            siblings={1}
            boundaries={1}
            size="sm"
            getItemProps={(item) => ({ 'aria-label': `Page ${item}` })}
            getControlProps={(control) => ({ 'aria-label': labels[control] })}
          />
        </nav>
      )}
    </Group>
  );
}
