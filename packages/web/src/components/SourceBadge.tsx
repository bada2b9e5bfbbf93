import { Badge } from '@mantine/core';
import { IconFileCode } from '@tabler/icons-react';

/** Where something the console lists is defined: "From gatehouse.yaml" (read-only here) or "Console". */
export function SourceBadge({ source }: { source: 'config' | 'console' }) {
  return source === 'config' ? (
    <Badge variant="light" color="gray" tt="none" leftSection={<IconFileCode size={12} aria-hidden />}>
      From gatehouse.yaml
    </Badge>
  ) : (
    <Badge variant="light" color="blue" tt="none">
      Console
    </Badge>
  );
}
