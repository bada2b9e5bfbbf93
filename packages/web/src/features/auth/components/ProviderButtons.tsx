import type { SignInProvider } from '@gatehouse/contract';
import { Alert, Button, Stack, Text } from '@mantine/core';
import { IconInfoCircle, IconLogin2 } from '@tabler/icons-react';
import { signInStartHref } from '../utils/returnTo';

export interface ProviderButtonsProps {
  providers: SignInProvider[];
  /** The return-to the server accepted (its verdict on `rd`): a portal path or an app URL. */
  returnTo: string;
}

/**
 * A provider whose IdP does not answer right now (the server's active check): shown, so nobody wonders
 * where it went, but not a link, since following it would only end on an error.
 */
function UnavailableProvider({ provider }: { provider: SignInProvider }) {
  const noteId = `provider-${provider.id}-unavailable`;
  return (
    <Stack gap={4}>
      <Button size="md" fullWidth variant="default" disabled aria-describedby={noteId} leftSection={<IconLogin2 size={20} aria-hidden />}>
        {`Sign in with ${provider.name}`}
      </Button>
      <Text id={noteId} size="sm" c="dimmed" ta="center">
        {`${provider.name} is unavailable right now. Try again in a minute.`}
      </Text>
    </Stack>
  );
}

/**
 * One "Sign in with <name>" per enabled provider. Each is a plain link, not a fetch: the server answers
 * the start URL with a redirect to the IdP and sets the cookie that binds the attempt to this browser.
 */
export function ProviderButtons({ providers, returnTo }: ProviderButtonsProps) {
  if (providers.length === 0) {
    return (
      <Alert color="gray" title="No sign-in providers are enabled" icon={<IconInfoCircle aria-hidden />}>
        There is no way to sign in yet. Ask your administrator to enable an identity provider.
      </Alert>
    );
  }
  return (
    <Stack gap="sm">
      {providers.map((provider) =>
        provider.availability === 'unavailable' ? (
          <UnavailableProvider key={provider.id} provider={provider} />
        ) : (
          <Button
            key={provider.id}
            component="a"
            href={signInStartHref(provider.startUrl, returnTo)}
            size="md"
            fullWidth
            variant={providers.length === 1 ? 'filled' : 'default'}
            leftSection={<IconLogin2 size={20} aria-hidden />}
          >
            {`Sign in with ${provider.name}`}
          </Button>
        ),
      )}
    </Stack>
  );
}
