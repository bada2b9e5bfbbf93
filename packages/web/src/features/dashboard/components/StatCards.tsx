import type { Dashboard } from '@gatehouse/contract';
import { Group, Paper, SimpleGrid, Skeleton, Text, ThemeIcon } from '@mantine/core';
import { IconAlertTriangle, IconBan, IconDevices, IconLogin2, IconUsers } from '@tabler/icons-react';
import { rangePeriod } from '../utils/dashboardRange';
import classes from './StatCards.module.css';

interface Stat {
  label: string;
  value: number;
  note: string;
  icon: typeof IconUsers;
  color: string;
}

const numbers = new Intl.NumberFormat();

function stats(dashboard: Dashboard): Stat[] {
  const period = `in ${rangePeriod(dashboard.range)}`;
  return [
    { label: 'Live sessions', value: dashboard.liveSessions, note: 'active now', icon: IconDevices, color: 'blue' },
    { label: 'Users', value: dashboard.users, note: 'in all', icon: IconUsers, color: 'grape' },
    { label: 'Sign-ins', value: dashboard.totals.signIns, note: period, icon: IconLogin2, color: 'teal' },
    { label: 'Failed sign-ins', value: dashboard.totals.failures, note: period, icon: IconAlertTriangle, color: 'orange' },
    { label: 'Access denials', value: dashboard.totals.denials, note: period, icon: IconBan, color: 'red' },
  ];
}

/** The dashboard's headline numbers, as a description list (each number keeps its label). */
export function StatCards({ dashboard }: { dashboard: Dashboard }) {
  return (
    <SimpleGrid component="dl" cols={{ base: 2, sm: 3, lg: 5 }} spacing="md" m={0} data-testid="stat-cards">
      {stats(dashboard).map((stat) => (
        <Paper key={stat.label} withBorder radius="md" p="md" className={classes.card}>
          <Text component="dt" size="sm" fw={600} c="dimmed">
            {stat.label}
          </Text>
          <dd className={classes.value}>
            <Group justify="space-between" align="center" wrap="nowrap" gap="xs">
              <Text component="span" fz={28} fw={700} lh={1.2}>
                {numbers.format(stat.value)}
              </Text>
              <ThemeIcon variant="light" color={stat.color} size="lg" radius="md" aria-hidden>
                <stat.icon size={20} />
              </ThemeIcon>
            </Group>
            <Text component="span" size="xs" c="dimmed" display="block">
              {stat.note}
            </Text>
          </dd>
        </Paper>
      ))}
    </SimpleGrid>
  );
}

export function StatCardsSkeleton() {
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} spacing="md" aria-hidden>
      {Array.from({ length: 5 }, (_, index) => (
        <Skeleton key={index} height={104} radius="md" />
      ))}
    </SimpleGrid>
  );
}
