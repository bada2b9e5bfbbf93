import type { SignInProvider } from '@gatehouse/contract';
import { IconInfoCircle, IconLogin2 } from '@tabler/icons-react';
import { Alert } from './SignInAlert';
import { signInStartHref } from '../utils/returnTo';

export interface ProviderButtonsProps {
  providers: SignInProvider[];
  /** The return-to the server accepted (its verdict on `rd`): a portal path or an app URL. */
  returnTo: string;
}

/**
 * One "Sign in with <name>" per enabled provider. Each is a plain link, not a fetch: the server answers
 * the start URL with a redirect to the IdP and sets the cookie that binds the attempt to this browser.
 * A long name wraps onto a second line rather than being cut off on a phone.
 */
export function ProviderButtons({ providers, returnTo }: ProviderButtonsProps) {
  if (providers.length === 0) {
    return (
      <Alert tone="gray" title="No sign-in providers are enabled" icon={<IconInfoCircle aria-hidden />}>
        <p>There is no way to sign in yet. Ask your administrator to enable an identity provider.</p>
      </Alert>
    );
  }
  return (
    <div className="stack-sm">
      {providers.map((provider) => (
        <a key={provider.id} className={`button ${providers.length === 1 ? 'button-filled' : 'button-default'}`} href={signInStartHref(provider.startUrl, returnTo)}>
          <IconLogin2 size={20} aria-hidden className="button-icon" />
          <span>{`Sign in with ${provider.name}`}</span>
        </a>
      ))}
    </div>
  );
}
