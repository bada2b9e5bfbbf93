import { endpoints, type ProviderRef } from '@gatehouse/contract';
import { Button } from '@mantine/core';
import { IconLink } from '@tabler/icons-react';
import { CsrfForm } from '../../../components/CsrfForm';

/**
 * "Link <provider>": a form post, not a fetch, since the server answers with a redirect to the IdP and
 * back (to `/account?linked=<id>` on success). The hidden `csrf_token` stops another site from linking
 * its own IdP account to this person's (login CSRF on the link flow).
 */
export function LinkProviderButton({ provider }: { provider: ProviderRef }) {
  return (
    <CsrfForm action={endpoints.linkUrl(provider.id)} unavailableMessage="Linking is not available right now. Reload the page and try again.">
      {(ready) => (
        <Button type="submit" variant="default" leftSection={<IconLink size={18} aria-hidden />} disabled={!ready}>
          {`Link ${provider.name}`}
        </Button>
      )}
    </CsrfForm>
  );
}
