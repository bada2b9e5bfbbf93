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
 * A provider whose IdP does not answer right now (the server's active check): shown, so nobody wonders
 * where it went, but not a link, since following it would only end on an error.
 */
function UnavailableProvider({ provider }: { provider: SignInProvider }) {
  const noteId = `provider-${provider.id}-unavailable`;
  return (
    <div className="stack-xs">
      <button type="button" className="button button-default" disabled aria-describedby={noteId}>
        <IconLogin2 size={20} aria-hidden className="button-icon" />
        <span>{`Sign in with ${provider.name}`}</span>
      </button>
      <p id={noteId} className="dimmed centered">
        {`${provider.name} is unavailable right now. Try again in a minute.`}
      </p>
    </div>
  );
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
      {providers.map((provider) =>
        provider.availability === 'unavailable' ? (
          <UnavailableProvider key={provider.id} provider={provider} />
        ) : (
          <a key={provider.id} className={`button ${providers.length === 1 ? 'button-filled' : 'button-default'}`} href={signInStartHref(provider.startUrl, returnTo)}>
            <IconLogin2 size={20} aria-hidden className="button-icon" />
            <span>{`Sign in with ${provider.name}`}</span>
          </a>
        ),
      )}
    </div>
  );
}
