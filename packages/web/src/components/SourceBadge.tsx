import { Badge } from '@mantine/core';
import { IconFileCode } from '@tabler/icons-react';

/**
 * Where something the console lists is defined: the configuration, by its real source (`configLabel`:
 * "From gatehouse.yaml", "Built-in default"), read-only here; or "Console".
 */
export function SourceBadge({ source, configLabel }: { source: 'config' | 'console'; configLabel: string }) {
  return source === 'config' ? (
    <Badge variant="light" color="gray" tt="none" leftSection={<IconFileCode size={12} aria-hidden />}>
      {configLabel}
    </Badge>
  ) : (
    <Badge variant="light" color="blue" tt="none">
      Console
    </Badge>
  );
}
