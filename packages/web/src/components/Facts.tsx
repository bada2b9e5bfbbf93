import { Box, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import classes from './Facts.module.css';

export interface Fact {
  label: string;
  value: ReactNode;
}

/**
 * A few labelled values on one line that wraps ("IP address 127.0.0.1 · Last active 5 minutes ago"),
 * as a description list so each value keeps its label for screen readers. For the rows of a list,
 * where a table would need scrolling on a phone.
 */
export function Facts({ facts }: { facts: Fact[] }) {
  return (
    <Box component="dl" className={classes.facts}>
      {facts.map((fact) => (
        <div key={fact.label} className={classes.fact}>
          <Text component="dt" size="xs" c="dimmed">
            {fact.label}
          </Text>
          <Text component="dd" size="xs">
            {fact.value}
          </Text>
        </div>
      ))}
    </Box>
  );
}
