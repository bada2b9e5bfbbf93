import type { AdminProvider } from '@gatehouse/contract';
import { Switch, Text } from '@mantine/core';
import { useState } from 'react';
import { isApiError } from '../../../lib/apiClient';
import { useSetProviderEnabled } from '../api/setProviderEnabled';
import { DisableProviderDialog } from './DisableProviderDialog';

/**
 * "Offered on the sign-in page": turning a console provider on takes effect at once; turning it off asks
 * first, since whoever signed in with it is signed out. Providers from gatehouse.yaml only say Yes or No.
 *
 * A hidden provider (never tested) is on nobody's sign-in page, whatever its switch: the list says so
 * ("Not until tested"), and its page's switch is what it is, whether to offer it once a test passes.
 */
export function ProviderEnabledSwitch({ provider, withLabel = false }: { provider: AdminProvider; withLabel?: boolean }) {
  const enable = useSetProviderEnabled();
  const [confirming, setConfirming] = useState(false);
  const hidden = provider.source === 'console' && provider.publication.state === 'hidden';

  if (provider.source === 'config') {
    const answer = provider.enabled ? 'Yes' : 'No';
    return <Text size="sm">{withLabel ? `Offered on the sign-in page: ${answer}` : answer}</Text>;
  }
  if (hidden && !withLabel) {
    return <Text size="sm">{provider.enabled ? 'Not until tested' : 'No'}</Text>;
  }
  const label = hidden ? 'Offer on the sign-in page once tested' : 'Offered on the sign-in page';
  return (
    <>
      <Switch
        checked={provider.enabled}
        disabled={enable.isPending}
        label={withLabel ? label : undefined}
        aria-label={withLabel ? undefined : `Offer ${provider.name} on the sign-in page`}
        onChange={(event) => {
          if (event.currentTarget.checked) enable.mutate({ providerId: provider.id, enabled: true });
          else setConfirming(true);
        }}
      />
      {enable.isError && (
        <Text size="xs" c="red" role="alert">
          {isApiError(enable.error) ? (enable.error.detail ?? enable.error.title) : 'It could not be turned on.'}
        </Text>
      )}
      <DisableProviderDialog opened={confirming} provider={provider} onClose={() => setConfirming(false)} />
    </>
  );
}
