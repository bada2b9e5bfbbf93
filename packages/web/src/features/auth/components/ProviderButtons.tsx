import type { SignInProvider } from '@gatehouse/contract';
import { Alert, Button, Stack } from '@mantine/core';
import { IconInfoCircle, IconLogin2 } from '@tabler/icons-react';
import { signInStartHref } from '../utils/returnTo';

export interface ProviderButtonsProps {
  providers: SignInProvider[];
  /** The return-to the server accepted (its verdict on `rd`): a portal path or an app URL. */
  returnTo: string;
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
      {providers.map((provider) => (
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
      ))}
    </Stack>
  );
}
