import type { AdminProvider } from '@gatehouse/contract';
import { Badge } from '@mantine/core';

/**
 * Whether people can use a provider now: "Off", or its discovery status ("Ready", "Checking",
 * "Unavailable"). A dot badge: the text keeps the body colour, so it has full contrast in both schemes.
 */
export function ProviderStatusBadge({ provider }: { provider: Pick<AdminProvider, 'enabled' | 'discovery'> }) {
  if (!provider.enabled) {
    return (
      <Badge color="gray" variant="dot" tt="none">
        Off
      </Badge>
    );
  }
  switch (provider.discovery.status) {
    case 'ready':
      return (
        <Badge color="green" variant="dot" tt="none">
          Ready
        </Badge>
      );
    case 'unavailable':
      return (
        <Badge color="red" variant="dot" tt="none">
          Unavailable
        </Badge>
      );
    default:
      return (
        <Badge color="yellow" variant="dot" tt="none">
          Checking
        </Badge>
      );
  }
}
