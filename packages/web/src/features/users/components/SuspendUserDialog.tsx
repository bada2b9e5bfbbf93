import type { AdminUser } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useSuspendUser } from '../api/suspendUser';

export interface SuspendUserDialogProps {
  opened: boolean;
  user: AdminUser;
  onClose: () => void;
  onSuspended: () => void;
}

/** "Suspend bob@example.com? Their sessions end now.": asks before anyone is locked out. */
export function SuspendUserDialog({ opened, user, onClose, onSuspended }: SuspendUserDialogProps) {
  const suspend = useSuspendUser();
  const close = () => {
    if (suspend.isPending) return;
    suspend.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Suspend ${user.email}?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          Their sessions end now, and they can&apos;t sign in again until an admin reactivates the account.
        </Text>
        {suspend.isError && <ProblemAlert title={`We couldn't suspend ${user.email}`} error={suspend.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={suspend.isPending}>
            Cancel
          </Button>
          <Button
            color="red"
            loading={suspend.isPending}
            onClick={() =>
              suspend.mutate(user.id, {
                onSuccess: () => {
                  suspend.reset();
                  onSuspended();
                },
              })
            }
          >
            Suspend
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
