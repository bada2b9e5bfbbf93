import { pages } from '@gatehouse/contract';
import { Button, Text } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams, type LoaderFunctionArgs } from 'react-router';
import { ErrorCard } from '../../components/ErrorCard';
import { PageLoader } from '../../components/PageLoader';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { consentQueryOptions, useAnswerConsent, useConsent } from '../../features/consent/api/consent';
import { ConsentCard } from '../../features/consent/components/ConsentCard';
import { isApiError } from '../../lib/apiClient';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request, params }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    if (params.uid) void queryClient.prefetchQuery(consentQueryOptions(params.uid));
    return null;
  };

/**
 * `/authorize/:uid`: a third-party app asks the signed-in person's consent (the OpenID Provider's login
 * step sends them here). Allow or Deny, then on to the address the server gives: the app's
 * authorization resumes there and answers the app (a code, or access_denied).
 */
export default function AuthorizeRoute() {
  const uid = useParams().uid ?? '';
  const consent = useConsent(uid);
  const answer = useAnswerConsent();
  const [answering, setAnswering] = useState<'allow' | 'deny'>();

  const onAnswer = (allow: boolean) => {
    setAnswering(allow ? 'allow' : 'deny');
    answer.mutate(
      { uid, allow },
      {
        onSuccess: ({ location }) => {
          // Only ever on to the portal itself (the authorization's resume address): never anywhere else.
          const next = new URL(location, window.location.href);
          if (next.origin === window.location.origin) window.location.assign(next.href);
        },
        onError: () => setAnswering(undefined),
      },
    );
  };

  if (consent.isPending) return <PageLoader />;
  if (consent.isError) {
    const gone = isApiError(consent.error) && consent.error.status === 404;
    return (
      <ErrorCard
        title={gone ? 'Nothing to answer here' : 'This request could not be loaded'}
        reference={isApiError(consent.error) ? consent.error.reference : undefined}
        actions={
          <Button component={Link} to={pages.home.href()}>
            Back to your apps
          </Button>
        }
      >
        {gone ? <Text>This app’s request was answered already, has expired, or was made in another sign-in. Go back to the app and sign in again.</Text> : <ProblemAlert title="The request failed" error={consent.error} />}
      </ErrorCard>
    );
  }
  return (
    <>
      <PageTitle title={`Sign in to ${consent.data.app.name}?`} />
      <ConsentCard consent={consent.data} pending={answering} error={answer.isError ? answer.error : undefined} onAnswer={onAnswer} />
    </>
  );
}
