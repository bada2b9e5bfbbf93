import type { MyIdentity } from '@gatehouse/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useUnlinkIdentity } from '../api/unlinkIdentity';

export interface UnlinkIdentityDialogProps {
  opened: boolean;
  /** The identity to unlink (kept while the dialog closes, so its title does not change mid-animation). */
  identity: MyIdentity | null;
  onClose: () => void;
  /** After the identity was unlinked. */
  onUnlinked: (identity: MyIdentity) => void;
  /**
   * Whether closing puts focus back on the button that opened the dialog (yes after "Cancel"; not after
   * unlinking, when that button's row is gone and the caller moves focus itself).
   */
  returnFocus?: boolean;
}

/** "Unlink Partner IdP?": asks before an identity stops signing in to this account. */
export function UnlinkIdentityDialog({ opened, identity, onClose, onUnlinked, returnFocus = true }: UnlinkIdentityDialogProps) {
  const unlink = useUnlinkIdentity();
  const close = () => {
    if (unlink.isPending) return;
    unlink.reset();
    onClose();
  };
  const name = identity?.provider.name ?? '';
  return (
    <Modal opened={opened && identity !== null} onClose={close} title={`Unlink ${name}?`} centered returnFocus={returnFocus} closeButtonProps={{ 'aria-label': 'Close' }}>
      {identity && (
        <Stack gap="lg">
          <Text size="sm">
            {`You will no longer be able to sign in with ${name}`}
            {identity.email ? ` as ${identity.email}` : ''}. You can link it again later.
          </Text>
          {/* The server ends every session that signed in through the unlinked identity. */}
          <Text size="sm">
            {identity.current
              ? `This session signed in with ${name}, so you will be signed out here too.`
              : `Any session that signed in with ${name} ends.`}
          </Text>
          {unlink.isError && <ProblemAlert title={`We couldn't unlink ${name}`} error={unlink.error} />}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close} data-autofocus disabled={unlink.isPending}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={unlink.isPending}
              onClick={() =>
                unlink.mutate(identity, {
                  onSuccess: () => {
                    unlink.reset();
                    onUnlinked(identity);
                  },
                })
              }
            >
              Unlink
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
