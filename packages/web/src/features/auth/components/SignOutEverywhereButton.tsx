import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconDevicesX } from '@tabler/icons-react';
import { SignOutButton } from './SignOutButton';

/**
 * "Sign out everywhere": a button that asks first, in a dialog, because it ends this session too and
 * every other one at once. The dialog's confirm button is the sign-out form itself (`everywhere=true`).
 */
export function SignOutEverywhereButton() {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button variant="outline" color="red" leftSection={<IconDevicesX size={18} aria-hidden />} onClick={open}>
        Sign out everywhere
      </Button>
      <Modal opened={opened} onClose={close} title="Sign out everywhere?" centered closeButtonProps={{ 'aria-label': 'Close' }}>
        <Stack gap="lg">
          <Text size="sm">
            Every session of your account ends, this one included, on every device and browser. You will need to
            sign in again wherever you use Gatehouse.
          </Text>
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close} data-autofocus>
              Cancel
            </Button>
            <SignOutButton everywhere label="Sign out everywhere" variant="filled" color="red" />
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
