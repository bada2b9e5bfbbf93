import type { AdminApp } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useDeleteApp } from '../api/deleteApp';

export interface DeleteAppDialogProps {
  opened: boolean;
  app: AdminApp;
  onClose: () => void;
  onDeleted: () => void;
}

/** "Delete Reports?": asks before an app stops being reachable through Gatehouse. */
export function DeleteAppDialog({ opened, app, onClose, onDeleted }: DeleteAppDialogProps) {
  const remove = useDeleteApp();
  const close = () => {
    if (remove.isPending) return;
    remove.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Delete ${app.name}?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          Gatehouse stops answering for {app.publicUrl} at once, and people can no longer open the app through it. This can&apos;t be
          undone.
        </Text>
        {remove.isError && <ProblemAlert title={`We couldn't delete ${app.name}`} error={remove.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={remove.isPending}>
            Cancel
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => remove.mutate(app.id, { onSuccess: onDeleted })}>
            Delete
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
