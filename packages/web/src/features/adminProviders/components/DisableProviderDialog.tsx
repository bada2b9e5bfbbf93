import type { AdminProvider } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useSetProviderEnabled } from '../api/setProviderEnabled';

export interface DisableProviderDialogProps {
  opened: boolean;
  provider: AdminProvider;
  onClose: () => void;
}

/** "Turn off Partner IdP?": asks before a provider disappears from the sign-in page and its sessions end. */
export function DisableProviderDialog({ opened, provider, onClose }: DisableProviderDialogProps) {
  const disable = useSetProviderEnabled();
  const close = () => {
    if (disable.isPending) return;
    disable.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Turn off ${provider.name}?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          {provider.name} disappears from the sign-in page at once, and everyone signed in with it is signed out now. Their accounts and
          linked identities stay; turn it back on at any time.
        </Text>
        {disable.isError && <ProblemAlert title={`We couldn't turn off ${provider.name}`} error={disable.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={disable.isPending}>
            Cancel
          </Button>
          <Button color="red" loading={disable.isPending} onClick={() => disable.mutate({ providerId: provider.id, enabled: false }, { onSuccess: close })}>
            Turn off
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
