import { pages, type CurrentSession } from '@gatehouse/contract';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ProblemAlert } from '../components/ProblemAlert';
import { PageLoader } from '../components/PageLoader';
import { useSession } from '../features/auth/api/getSession';
import { isUnauthenticated } from '../lib/apiClient';

export interface RequireSessionProps {
  children: (current: CurrentSession) => ReactNode;
  /** Where a signed-out visitor goes; defaults to the sign-in page coming back here. */
  signedOutHref?: (returnTo: string) => string;
}

/**
 * Renders its children with the current session. The route's loader has already checked it once; this
 * keeps watching, so a session that ends while the page is open (expired, revoked in another tab and
 * noticed on the next refetch) sends the person to sign in instead of showing stale details.
 */
export function RequireSession({ children, signedOutHref = pages.signIn.href }: RequireSessionProps) {
  const location = useLocation();
  const session = useSession();
  if (isUnauthenticated(session.error)) {
    return <Navigate to={signedOutHref(location.pathname + location.search)} replace />;
  }
  if (session.data) return children(session.data);
  if (session.isError) {
    return <ProblemAlert title="We couldn't check your session" error={session.error} onRetry={() => void session.refetch()} />;
  }
  return <PageLoader />;
}
