import { Anchor, Table, Text } from '@mantine/core';
import type { CSSProperties, ReactNode } from 'react';
import { Link } from 'react-router';

/** One column of a `DataTable`: its header and what each row shows in it. */
export interface DataTableColumn<Row> {
  /** Unique within the table (React's key for the header and the cells). */
  key: string;
  header: ReactNode;
  cell: (row: Row) => ReactNode;
  /** Numbers are right-aligned, header and cells alike. */
  align?: 'right';
  /** Keeps the cells on one line (dates). */
  noWrap?: boolean;
}

export interface DataTableProps<Row> {
  columns: DataTableColumn<Row>[];
  rows: Row[];
  getRowKey: (row: Row) => string;
  /** `data-*` attributes of a row, so a row can be found by what it shows (`data-app-id`). */
  getRowAttributes?: (row: Row) => Record<`data-${string}`, string>;
  /** Below this width the table scrolls sideways instead of squeezing its columns. */
  minWidth: number;
  /** Names the table for screen readers when the page around it does not. */
  label?: string;
  testId?: string;
  /** Many short rows (a log): tighter rows, striped. */
  compact?: boolean;
  /** Shown instead of the table when there are no rows; without it the table shows with no rows. */
  empty?: ReactNode;
}

const noWrap: CSSProperties = { whiteSpace: 'nowrap' };

/**
 * The console's lists: a header row of column names and a row per item, scrolling sideways on narrow
 * screens. Each table says only its columns; loading (`TableSkeleton`) and failure states stay with
 * whoever holds the query.
 */
export function DataTable<Row>({ columns, rows, getRowKey, getRowAttributes, minWidth, label, testId, compact = false, empty }: DataTableProps<Row>) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table verticalSpacing={compact ? 'xs' : 'sm'} striped={compact} highlightOnHover aria-label={label} data-testid={testId}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.key} scope="col" ta={column.align}>
                {column.header}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={getRowKey(row)} {...getRowAttributes?.(row)}>
              {columns.map((column) => (
                <Table.Td key={column.key} ta={column.align} style={column.noWrap ? noWrap : undefined}>
                  {column.cell(row)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** A row's way to the item's own page: its name in bold, and under it (when given) its id, dimmed. */
export function RowLink({ to, children, detail }: { to: string; children: ReactNode; detail?: string }) {
  return (
    <>
      <Anchor component={Link} to={to} fw={600} size="sm" style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Anchor>
      {detail !== undefined && (
        <Text size="xs" c="dimmed">
          {detail}
        </Text>
      )}
    </>
  );
}
