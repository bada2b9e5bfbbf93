import { Button } from '@mantine/core';
import type { ReactNode } from 'react';
import { EmptyList } from './EmptyList';

export interface NoResultsProps {
  icon: ReactNode;
  /** Whether filters are in effect: then the words are about them, and "Clear filters" is offered. */
  filtered: boolean;
  title: string;
  description: string;
  onClearFilters: () => void;
}

/** The empty state of a filtered list: nothing at all yet, or nothing that matches the filters. */
export function NoResults({ icon, filtered, title, description, onClearFilters }: NoResultsProps) {
  return (
    <EmptyList
      icon={icon}
      title={title}
      description={description}
      action={
        filtered && (
          <Button variant="default" onClick={onClearFilters}>
            Clear filters
          </Button>
        )
      }
    />
  );
}
