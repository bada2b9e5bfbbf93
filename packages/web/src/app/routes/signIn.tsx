import { useEffect } from 'react';
import { useLocation } from 'react-router';
import { PageLoader } from '../../components/PageLoader';

/**
 * `/sign-in` is a page of its own (sign-in.html, src/signIn/): the server sends it for this path, and it
 * loads none of this app's libraries. A link or redirect inside the app that lands here loads it from
 * the server, keeping the query (`rd`, `error`).
 */
export default function SignInRoute() {
  const { pathname, search, hash } = useLocation();
  useEffect(() => {
    window.location.replace(`${pathname}${search}${hash}`);
  }, [pathname, search, hash]);
  return <PageLoader />;
}
