import { endpoints } from '@gatehouse/contract';
import { Button } from '@mantine/core';
import { IconPlayerPlay } from '@tabler/icons-react';
import { CsrfForm } from '../../../components/CsrfForm';

/**
 * "Test sign-in": a real sign-in with the provider (even one that is off) in this tab, which creates
 * nothing and comes back to a page showing what the provider sent and what Gatehouse would decide.
 */
export function TestSignInButton({ providerId, label = 'Test sign-in' }: { providerId: string; label?: string }) {
  return (
    <CsrfForm action={endpoints.testSignInUrl(providerId)} unavailableMessage="The test sign-in is not available right now. Reload the page and try again.">
      {(ready) => (
        <Button type="submit" variant="default" disabled={!ready} leftSection={<IconPlayerPlay size={16} aria-hidden />}>
          {label}
        </Button>
      )}
    </CsrfForm>
  );
}
