import type { Dashboard } from '@gatehouse/contract';
import '@mantine/charts/styles.css';
import { LineChart } from '@mantine/charts';
import { Box, Table, Text, VisuallyHidden } from '@mantine/core';
import { useId } from 'react';
import { bucketLabel, summariseActivity } from '../utils/dashboardRange';
import classes from './ActivityChart.module.css';

const SERIES = [
  { name: 'signIns', label: 'Sign-ins', color: 'blue.6' },
  // Dashes as well as colours, so the lines differ for people who don't tell the colours apart.
  { name: 'failures', label: 'Failed sign-ins', color: 'orange.6', strokeDasharray: '6 4' },
  { name: 'denials', label: 'Access denials', color: 'red.7', strokeDasharray: '2 3' },
] as const;

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
          h={280}
          data={data}
          dataKey="label"
          series={SERIES.map((series) => ({ ...series }))}
          curveType="linear"
          withLegend
          legendProps={{ verticalAlign: 'bottom', height: 40 }}
          yAxisProps={{ allowDecimals: false, width: 40 }}
          tickLine="y"
          gridAxis="x"
          withDots={dashboard.range === '7d'}
          // The chart is not the accessible version (the table below is): no keyboard layer of its own.
          lineChartProps={{ accessibilityLayer: false }}
        />
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
