import { Badge } from '@mantine/core';
import { IconFileCode } from '@tabler/icons-react';
import type { AppSource } from '../api/getAdminApps';

/** Where an app is defined: "From gatehouse.yaml" (read-only here) or "Console". */
export function SourceBadge({ source }: { source: AppSource }) {
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
