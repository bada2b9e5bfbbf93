import { EmptyState } from '@mantine/core';
import type { ReactNode } from 'react';

export interface EmptyListProps {
  icon: ReactNode;
  title: string;
  description: string;
  /** What to do about it ("New app", "Clear filters"). */
  action?: ReactNode;
}

/** What a list shows when it has nothing to list: why, and what to do about it. */
export function EmptyList({ icon, title, description, action }: EmptyListProps) {
  return (
    <EmptyState icon={icon} withIndicatorBackground title={title} description={description} py="xl">
      {action && <EmptyState.Actions>{action}</EmptyState.Actions>}
    </EmptyState>
  );
}
