import { Stack } from '@mantine/core';
import { Section } from '../../../components/Section';
import { backchannelLogoutUriFor, redirectUriFor } from '../utils/providerForm';
import { CopyableValue } from '../../../components/CopyableValue';

export interface RegisterAtProviderProps {
  /** The portal's origin (this page's). */
  origin: string;
  /** The provider id as typed so far; the redirect URI contains it. */
  providerId: string;
  /** Whether the provider announced back-channel logout (unknown on the edit page: shown anyway). */
  backchannelLogout?: boolean;
}

/** "Register Gatehouse at the provider": the exact addresses to enter at the IdP, each with a copy button. */
export function RegisterAtProvider({ origin, providerId, backchannelLogout = true }: RegisterAtProviderProps) {
  return (
    <Section
      title="Register Gatehouse at the provider"
      description="Register Gatehouse at the identity provider as a confidential web client with these addresses. The redirect URI contains the provider id."
    >
      <Stack gap="md" data-testid="register-at-provider">
        <CopyableValue label="Redirect URI" value={redirectUriFor(origin, providerId.trim())} />
        <CopyableValue label="Post-logout redirect URI" value={`${origin}/signed-out`} />
        {backchannelLogout && (
          <CopyableValue
            label="Back-channel logout URI"
            description="Where the provider supports it: signing out there ends the Gatehouse session too."
            value={backchannelLogoutUriFor(origin, providerId.trim())}
          />
        )}
      </Stack>
    </Section>
  );
}
