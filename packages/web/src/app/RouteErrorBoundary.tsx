import { pages } from '@gatehouse/contract';
import { Button, Text } from '@mantine/core';
import { isRouteErrorResponse, Link, useRouteError } from 'react-router';
import { ErrorCard } from '../components/ErrorCard';
import { ProblemAlert } from '../components/ProblemAlert';
import { isApiError } from '../lib/apiClient';

/** A chunk that no longer exists: the app was redeployed while this tab was open. */
function isStaleBundle(error: unknown): boolean {
  return error instanceof TypeError && /dynamically imported module|importing a module script/i.test(error.message);
}

/**
 * What a page shows when its loader or render failed: plain words, the reference id when the server
 * sent one, and a way out. Never a stack trace.
 */
export function RouteErrorBoundary() {
  const error = useRouteError();
  const stale = isStaleBundle(error);
  const notFound = isRouteErrorResponse(error) && error.status === 404;
  return (
    <ErrorCard
      title={notFound ? 'Page not found' : 'Something went wrong'}
      actions={
        <>
          <Button onClick={() => window.location.reload()}>Reload the page</Button>
          <Button component={Link} to={pages.home.href()} variant="default">
            Back to your apps
          </Button>
        </>
      }
    >
      {stale ? (
        <Text>Gatehouse was updated while this page was open. Reload the page to continue.</Text>
      ) : isApiError(error) ? (
        <ProblemAlert title="This page could not be loaded" error={error} />
      ) : (
        <Text>{notFound ? 'There is nothing at this address.' : 'This page could not be shown. Try again in a moment.'}</Text>
      )}
    </ErrorCard>
  );
}
