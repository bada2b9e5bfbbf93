import { Anchor, Table, Text } from '@mantine/core';
import type { CSSProperties, ReactNode } from 'react';
import { Link } from 'react-router';
import classes from './DataTable.module.css';
import { SidewaysScroll } from './SidewaysScroll';

/** One column of a `DataTable`: its header and what each row shows in it. */
export interface DataTableColumn<Row> {
  /** Unique within the table (React's key for the header and the cells). */
  key: string;
  /** The column's name: its header, and the label of its value when rows show as cards. */
  header: string;
  cell: (row: Row) => ReactNode;
  /** Numbers are right-aligned, header and cells alike (in the table; cards keep them beside their label). */
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
  /** The width the columns need side by side: below it the table scrolls sideways and says so. */
  minWidth: number;
  /** Names the table (and its scrolling frame) for screen readers: "Users", "Audit events". */
  label: string;
  testId?: string;
  /** Many short rows (a log): tighter rows, striped. */
  compact?: boolean;
  /** Shown instead of the table when there are no rows; without it the table shows with no rows. */
  empty?: ReactNode;
}

/**
 * The console's lists. Where the list has room for `minWidth` they are a table; with less room (down to
 * a tablet beside the console's navigation) the table scrolls sideways, and says so above it and to
 * screen readers, and its frame takes the keyboard's arrows; in a phone's width each row is a card with
 * every value beside its column's name (DataTable.module.css). Each table says only its columns;
 * loading (`TableSkeleton`) and failure states stay with whoever holds the query.
 */
export function DataTable<Row>({ columns, rows, getRowKey, getRowAttributes, minWidth, label, testId, compact = false, empty }: DataTableProps<Row>) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <div className={classes.frame}>
      <SidewaysScroll label={label}>
        <Table
          className={classes.table}
          style={{ '--data-table-min-width': `${minWidth}px` } as CSSProperties}
          verticalSpacing={compact ? 'xs' : 'sm'}
          striped={compact}
          highlightOnHover
          aria-label={label}
          data-testid={testId}
          // The roles are spelled out: as cards, `display` changes, and browsers then drop a table's own.
          role="table"
        >
          <Table.Thead role="rowgroup">
            <Table.Tr role="row">
              {columns.map((column) => (
                <Table.Th key={column.key} scope="col" role="columnheader" data-align={column.align}>
                  {column.header}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody role="rowgroup">
            {rows.map((row) => (
              <Table.Tr key={getRowKey(row)} role="row" {...getRowAttributes?.(row)}>
                {columns.map((column, index) => (
                  <Table.Td
                    key={column.key}
                    role="cell"
                    data-label={column.header}
                    data-align={column.align}
                    data-nowrap={column.noWrap || undefined}
                    data-primary={index === 0 || undefined}
                  >
                    {column.cell(row)}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </SidewaysScroll>
    </div>
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
