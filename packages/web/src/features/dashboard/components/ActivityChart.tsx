import type { Dashboard } from '@gatehouse/contract';
import '@mantine/charts/styles.css';
import { LineChart } from '@mantine/charts';
import { Box, Table, Text, VisuallyHidden } from '@mantine/core';
import { useId } from 'react';
import { bucketLabel, summariseActivity } from '../utils/dashboardRange';
import classes from './ActivityChart.module.css';

const SERIES = [
  { name: 'signIns', label: 'Sign-ins', color: 'blue.6', strokeDasharray: undefined },
  // Dashes as well as colours, so the lines differ for people who don't tell the colours apart.
  { name: 'failures', label: 'Failed sign-ins', color: 'orange.6', strokeDasharray: '6 4' },
  { name: 'denials', label: 'Access denials', color: 'red.7', strokeDasharray: '2 3' },
] as const;

/** A Mantine colour ("orange.6") as its CSS variable. */
const cssColor = (color: string) => `var(--mantine-color-${color.replace('.', '-')})`;

/**
 * The chart's key, in the page's flow rather than inside the drawing: it wraps onto as many lines as
 * the width needs (the chart's own legend has a fixed height, and a phone cut its second line off).
 * Each line is drawn as the chart draws it, colour and dashes.
 */
function Legend() {
  return (
    <ul className={classes.legend}>
      {SERIES.map((series) => (
        <li key={series.name} className={classes.legendItem}>
          <svg width="24" height="8" aria-hidden>
            <line x1="0" y1="4" x2="24" y2="4" stroke={cssColor(series.color)} strokeWidth="2" strokeDasharray={series.strokeDasharray} />
          </svg>
          <Text component="span" size="sm">
            {series.label}
          </Text>
        </li>
      ))}
    </ul>
  );
}

/**
 * Sign-ins, failures and denials per hour (24 h) or per day (7 days) as a line chart inside a
 * `<figure>`: the caption sums it up in words, and the numbers are also a table that screen readers
 * read (the drawing itself is hidden from them).
 */
export function ActivityChart({ dashboard }: { dashboard: Dashboard }) {
  const captionId = useId();
  const data = dashboard.buckets.map((bucket) => ({
    label: bucketLabel(bucket.start, dashboard.range),
    start: bucket.start,
    signIns: bucket.signIns,
    failures: bucket.failures,
    denials: bucket.denials,
  }));
  const unit = dashboard.range === '24h' ? 'Hour' : 'Day';
  return (
    <Box component="figure" m={0} aria-labelledby={captionId} className={classes.figure}>
      <Text component="figcaption" id={captionId} size="sm" mb="md">
        {summariseActivity(dashboard)}
      </Text>
      <div aria-hidden data-testid="activity-chart">
        <LineChart
          h={240}
          data={data}
          dataKey="label"
          series={SERIES.map(({ strokeDasharray, ...series }) => ({ ...series, ...(strokeDasharray ? { strokeDasharray } : {}) }))}
          curveType="linear"
          yAxisProps={{ allowDecimals: false, width: 40 }}
          tickLine="y"
          gridAxis="x"
          withDots={dashboard.range === '7d'}
          // The chart is not the accessible version (the table below is): no keyboard layer of its own.
          lineChartProps={{ accessibilityLayer: false }}
        />
        <Legend />
      </div>
      <VisuallyHidden>
        <Table>
          <caption>Sign-ins, failed sign-ins and access denials per {unit.toLowerCase()}</caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">{unit}</Table.Th>
              {SERIES.map((series) => (
                <Table.Th key={series.name} scope="col">
                  {series.label}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {data.map((row) => (
              <Table.Tr key={row.start}>
                <Table.Th scope="row">{row.label}</Table.Th>
                <Table.Td>{row.signIns}</Table.Td>
                <Table.Td>{row.failures}</Table.Td>
                <Table.Td>{row.denials}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </VisuallyHidden>
    </Box>
  );
}
