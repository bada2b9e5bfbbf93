import { Alert } from '@mantine/core';
import { IconCircleCheck } from '@tabler/icons-react';
import { useIdentities } from '../api/getIdentities';
import { linkedProviderName } from '../utils/linkedProvider';

export interface LinkedAlertProps {
  /** The `linked` query parameter the server sent back after linking. */
  providerId: string | null;
  onClose: () => void;
}

/** "Partner IdP is now linked to your account.", after the link flow came back successfully. */
export function LinkedAlert({ providerId, onClose }: LinkedAlertProps) {
  const identities = useIdentities();
  const name = linkedProviderName(providerId, identities.data);
  if (!name) return null;
  return (
    <Alert
      color="green"
      title="Identity linked"
      icon={<IconCircleCheck aria-hidden />}
      role="status"
      withCloseButton
      closeButtonLabel="Dismiss"
      onClose={onClose}
      // Mantine's green text on the light green background is below 4.5:1; the body's text colour is not.
      styles={{ title: { color: 'var(--mantine-color-text)' } }}
    >
      {`${name} is now linked to your account.`} You can sign in with it from now on.
    </Alert>
  );
}
