import type { AdminProvider } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useDeleteProvider } from '../api/deleteProvider';

export interface DeleteProviderDialogProps {
  opened: boolean;
  provider: AdminProvider;
  onClose: () => void;
  onDeleted: () => void;
}

/** "Delete Partner IdP?": asks before a provider nobody has signed in with is removed for good. */
export function DeleteProviderDialog({ opened, provider, onClose, onDeleted }: DeleteProviderDialogProps) {
  const remove = useDeleteProvider();
  const close = () => {
    if (remove.isPending) return;
    remove.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Delete ${provider.name}?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          {provider.name} is removed from the sign-in page and from Gatehouse, with its client credentials. This can&apos;t be undone;
          to use it again, add it anew.
        </Text>
        {remove.isError && <ProblemAlert title={`We couldn't delete ${provider.name}`} error={remove.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={remove.isPending}>
            Cancel
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => remove.mutate(provider.id, { onSuccess: onDeleted })}>
            Delete
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
