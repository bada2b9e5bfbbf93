import type { CurrentSession, ProvidersResponse } from '@gatehouse/contract';
import { pages } from '@gatehouse/contract/paths';
import { IconAlertCircle, IconSettings, IconShieldLock } from '@tabler/icons-react';
import { useCallback, useEffect, useState } from 'react';
import { PRODUCT_NAME } from '../config/product';
import { ProviderButtons } from '../features/auth/components/ProviderButtons';
import { SignedInNotice } from '../features/auth/components/SignedInNotice';
import { SignInErrorAlert } from '../features/auth/components/SignInErrorAlert';
import { providersToOffer, readSignInFailure } from '../features/auth/utils/signInErrors';
import { Alert } from '../features/auth/components/SignInAlert';
import { loadProviders, loadSession, SignInPageError, type LoadFailure } from './api';

type Providers = { state: 'loading' } | { state: 'ready'; data: ProvidersResponse } | { state: 'failed'; failure: LoadFailure };

const MAIN_CONTENT_ID = 'main-content';

/**
 * `/sign-in[?rd=<path or app URL>][&error=<code>&ref=<reference>]`: one button per enabled provider, the
 * banner a failed attempt ends on, and a way onward for someone who is signed in already. `rd` is a path
 * here, or the absolute URL of a protected app that sent the person to sign in; the page never uses it
 * as given, only the server's verdict on it (`returnTo` in `GET /api/providers?rd=`), which names the
 * app to someone signed in (never to a stranger: the page is public and `rd` anyone's to choose). The frame is the console's (header, skip link, `<main>`), drawn without its libraries;
 * sign-in.html holds the same markup, so the first paint needs no script.
 */
export function SignInPage() {
  const search = new URLSearchParams(window.location.search);
  const rd = search.get('rd');
  const failure = readSignInFailure(search);
  const [providers, setProviders] = useState<Providers>({ state: 'loading' });
  // 401 is the expected answer here; it only decides whether to show "You are signed in as …".
  const [session, setSession] = useState<CurrentSession | null>(null);
  // A session Gatehouse ended because the rules no longer admit the person: said, with why.
  const [ended, setEnded] = useState<LoadFailure | null>(null);

  // State is set only once an answer is in (the first render shows the loading state already).
  const fetchProviders = useCallback(
    (signal: AbortSignal) =>
      loadProviders(rd, signal).then(
        (data) => setProviders({ state: 'ready', data }),
        (error: unknown) => {
          if (signal.aborted) return;
          const shown = error instanceof SignInPageError ? error.failure : { title: 'Request failed', detail: 'Something unexpected happened.', reference: undefined };
          setProviders({ state: 'failed', failure: shown });
        },
      ),
    [rd],
  );

  useEffect(() => {
    const controller = new AbortController();
    void fetchProviders(controller.signal);
    loadSession(controller.signal).then(
      (answer) => {
        setSession(answer.session);
        setEnded(answer.ended);
      },
      () => undefined,
    );
    return () => controller.abort();
  }, [fetchProviders]);

  const retry = () => {
    setProviders({ state: 'loading' });
    void fetchProviders(new AbortController().signal);
  };

  const data = providers.state === 'ready' ? providers.data : undefined;
  const organization = data?.organization.name;
  const appName = data?.returnTo.appName;

  return (
    <>
      <a href={`#${MAIN_CONTENT_ID}`} className="skip-link">
        Skip to content
      </a>
      <header className="header">
        <div className="container header-row">
          <a href={pages.home.href()} className="brand">
            <IconShieldLock size={24} aria-hidden className="brand-icon" />
            <span>{PRODUCT_NAME}</span>
          </a>
          {session?.user.admin && (
            <nav aria-label="Main">
              <a href={pages.admin.href()} className="header-link">
                <IconSettings size={18} aria-hidden />
                Admin
              </a>
            </nav>
          )}
        </div>
      </header>
      <main id={MAIN_CONTENT_ID} tabIndex={-1} className="main">
        <div className="container">
          <section className="card" aria-labelledby="sign-in-title">
            <div className="card-head">
              {/* The header names the product already: the card names the organisation only when it is another name. */}
              {organization && organization !== PRODUCT_NAME && (
                <p className="organization" data-testid="organization-name">
                  {organization}
                </p>
              )}
              <h1 id="sign-in-title">Sign in</h1>
              <p className="dimmed" data-testid="sign-in-purpose">
                {appName ? (
                  <>
                    Use your organisation&apos;s account to continue to <strong>{appName}</strong>.
                  </>
                ) : (
                  <>Use your organisation&apos;s account to continue.</>
                )}
              </p>
            </div>

            {failure && <SignInErrorAlert failure={failure} providers={data?.providers} />}
            {!failure && ended && (
              <Alert tone="blue" title={ended.title} icon={<IconAlertCircle aria-hidden />} role="status" data-error-code="session_ended">
                <p>{ended.detail}</p>
              </Alert>
            )}
            {session && data && <SignedInNotice current={session} returnTo={data.returnTo} />}

            {providers.state === 'loading' ? (
              <div className="skeleton" role="status" aria-label="Loading sign-in options" />
            ) : providers.state === 'failed' ? (
              <Alert tone="red" title="We couldn't load the sign-in options" icon={<IconAlertCircle aria-hidden />} role="alert">
                <p>{providers.failure.detail}</p>
                {providers.failure.reference && <p>Reference: {providers.failure.reference}</p>}
                <p>
                  <button type="button" className="button button-default button-small" onClick={retry}>
                    Try again
                  </button>
                </p>
              </Alert>
            ) : (
              <ProviderButtons providers={providersToOffer(providers.data.providers, failure)} returnTo={providers.data.returnTo.href} />
            )}
          </section>
        </div>
      </main>
    </>
  );
}
