import { Skeleton, Stack } from '@mantine/core';

/** Stand-in rows while a table loads; announced once ("Loading users"). */
export function TableSkeleton({ rows = 5, label }: { rows?: number; label: string }) {
  return (
    <Stack gap="xs" role="status" aria-label={label}>
      <Skeleton height={28} width="60%" />
      {Array.from({ length: rows }, (_, index) => (
        <Skeleton key={index} height={36} />
      ))}
    </Stack>
  );
}
