import type { AdminProvider } from '@gatehouse/contract';
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { usePublishProvider } from '../api/publishProvider';

export interface PublishProviderDialogProps {
  opened: boolean;
  provider: AdminProvider;
  onClose: () => void;
}

/** "Publish Corp IdP untested?": says plainly that nobody has signed in with it yet before it is offered to everyone. */
export function PublishProviderDialog({ opened, provider, onClose }: PublishProviderDialogProps) {
  const publish = usePublishProvider();
  const close = () => {
    if (publish.isPending) return;
    publish.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Publish ${provider.name} untested?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Alert color="orange" variant="light" icon={<IconAlertTriangle aria-hidden />} title="It was never tested" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
          No test sign-in with {provider.name} has passed. If its client secret or redirect URI is wrong, everyone who chooses it ends on an
          error.
        </Alert>
        <Text size="sm">
          {provider.name} appears on the sign-in page and the account page at once. A test sign-in first is safer: it publishes the provider by
          itself when it passes.
        </Text>
        {publish.isError && <ProblemAlert title={`We couldn't publish ${provider.name}`} error={publish.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={publish.isPending}>
            Cancel
          </Button>
          <Button color="red" loading={publish.isPending} onClick={() => publish.mutate(provider.id, { onSuccess: close })}>
            Publish untested
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
