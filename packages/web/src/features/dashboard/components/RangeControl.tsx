import type { DashboardRange } from '@gatehouse/contract';
import { SegmentedControl } from '@mantine/core';
import { RANGE_OPTIONS } from '../utils/dashboardRange';

/** "24 h | 7 days": which period the dashboard covers (radio buttons underneath, so arrow keys work). */
export function RangeControl({ value, onChange }: { value: DashboardRange; onChange: (range: DashboardRange) => void }) {
  return (
    <SegmentedControl
      aria-label="Time range"
      value={value}
      onChange={(next) => onChange(next as DashboardRange)}
      data={RANGE_OPTIONS.map(({ value: option, label }) => ({ value: option, label }))}
    />
  );
}
