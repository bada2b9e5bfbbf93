import type { AdminProvider } from '@gatehouse/contract';
import { Badge } from '@mantine/core';

/**
 * Whether people are offered a console provider: "Hidden — not tested yet" until a test sign-in with
 * it passed (or an admin published it), then "Published". Providers of gatehouse.yaml are always
 * offered, so they get none. A dot badge: the text keeps the body colour, for contrast in both schemes.
 */
export function PublicationBadge({ provider }: { provider: Pick<AdminProvider, 'source' | 'publication'> }) {
  if (provider.source !== 'console') return null;
  return provider.publication.state === 'hidden' ? (
    <Badge color="orange" variant="dot" tt="none" data-testid="publication-badge">
      Hidden — not tested yet
    </Badge>
  ) : (
    <Badge color="blue" variant="dot" tt="none" data-testid="publication-badge">
      Published
    </Badge>
  );
}
