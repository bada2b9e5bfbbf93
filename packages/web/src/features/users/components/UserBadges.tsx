import type { AdminUser } from '@gatehouse/contract';
import { Badge } from '@mantine/core';

/**
 * "Active" or "Suspended", in words as well as colour. A dot badge: the text keeps the body colour, so
 * it has full contrast in both schemes (green or red text on a tint of itself does not reach 4.5:1).
 */
export function StatusBadge({ status }: { status: AdminUser['status'] }) {
  return status === 'suspended' ? (
    <Badge color="red" variant="dot" tt="none">
      Suspended
    </Badge>
  ) : (
    <Badge color="green" variant="dot" tt="none">
      Active
    </Badge>
  );
}

/** "Admin" (or "Admin (config)" when the config file grants it); nothing for everyone else. */
export function AdminBadge({ user }: { user: Pick<AdminUser, 'admin' | 'adminFromConfig'> }) {
  if (!user.admin) return null;
  return (
    <Badge color="violet" variant="light" tt="none">
      {user.adminFromConfig ? 'Admin (config)' : 'Admin'}
    </Badge>
  );
}
