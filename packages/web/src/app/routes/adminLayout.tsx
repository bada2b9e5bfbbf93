import { pages } from '@gatehouse/contract';
import '@mantine/notifications/styles.css';
import { Alert, Button } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { IconLock } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { Link, Outlet, type LoaderFunctionArgs } from 'react-router';
import { ErrorCard } from '../../components/ErrorCard';
import { SignOutButton } from '../../features/auth/components/SignOutButton';
import { AdminNav } from '../AdminNav';
import { RequireSession } from '../RequireSession';
import { ensureSession } from '../ensureSession';
import classes from './adminLayout.module.css';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    return null;
  };

/**
 * Someone who is not (or no longer) an admin reached a console page from inside the app (the server
 * answers a full page load of `/admin*` with its own 403 page). The API would refuse them anyway.
 */
function NotAnAdmin() {
  return (
    <ErrorCard
      title="Admins only"
      actions={
        <>
          <Button component={Link} to={pages.home.href()}>
            Back to your apps
          </Button>
          <SignOutButton />
        </>
      }
    >
      <Alert color="red" icon={<IconLock aria-hidden />} title="You don't have access to the admin console">
        Only Gatehouse admins can open these pages. Ask an admin if you need access.
      </Alert>
    </ErrorCard>
  );
}

/** `/admin/*`: the console's frame, its side navigation and the page beside it, for admins only. */
export default function AdminLayout() {
  return (
    <RequireSession>
      {({ user }) =>
        user.admin ? (
          <div className={classes.layout}>
            {/* Confirmations of saves ("Saved"), announced politely; only the console has them. */}
            <Notifications position="top-right" />
            <aside className={classes.aside}>
              <AdminNav />
            </aside>
            <div className={classes.content}>
              <Outlet />
            </div>
          </div>
        ) : (
          <NotAnAdmin />
        )
      }
    </RequireSession>
  );
}
