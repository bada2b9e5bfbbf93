import type { AdminUser } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useSetUserAdmin } from '../api/setUserAdmin';

export interface GrantAdminDialogProps {
  opened: boolean;
  user: AdminUser;
  onClose: () => void;
  onGranted: () => void;
}

/** "Make bob@example.com an admin?": asks before handing over the whole console with one click. */
export function GrantAdminDialog({ opened, user, onClose, onGranted }: GrantAdminDialogProps) {
  const grant = useSetUserAdmin();
  const close = () => {
    if (grant.isPending) return;
    grant.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Make ${user.email} an admin?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          From their next request they can manage users, apps and providers, grant or remove this role, and read the audit
          log. You can remove the role again here.
        </Text>
        {grant.isError && <ProblemAlert title={`We couldn't make ${user.email} an admin`} error={grant.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={grant.isPending}>
            Cancel
          </Button>
          <Button
            loading={grant.isPending}
            onClick={() =>
              grant.mutate(
                { userId: user.id, admin: true },
                {
                  onSuccess: () => {
                    grant.reset();
                    onGranted();
                  },
                },
              )
            }
          >
            Grant admin
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
