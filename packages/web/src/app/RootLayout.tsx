import { pages } from '@gatehouse/contract';
import { Anchor, AppShell, Button, Container, Group, Text } from '@mantine/core';
import { IconSettings, IconShieldLock } from '@tabler/icons-react';
import { Link, Outlet, useLocation, useMatches, useNavigation } from 'react-router';
import { PRODUCT_NAME } from '../config/product';
import { useSession } from '../features/auth/api/getSession';
import { UserMenu } from '../features/auth/components/UserMenu';
import classes from './RootLayout.module.css';

export const MAIN_CONTENT_ID = 'main-content';

/** A route's `handle`: `{ wide: true }` gives its pages the full width (the admin console's tables). */
export interface RouteHandle {
  wide?: boolean;
}

function isWide(handle: unknown): boolean {
  return typeof handle === 'object' && handle !== null && (handle as RouteHandle).wide === true;
}

/** "Admin" in the header, for admins only (the server decides; `/api/session` says so); no empty nav otherwise. */
function AdminLink() {
  const session = useSession();
  const { pathname } = useLocation();
  if (!session.data?.user.admin) return null;
  const here = pathname === pages.admin.path || pathname.startsWith(`${pages.admin.path}/`);
  return (
    <nav aria-label="Main">
      <Button
        component={Link}
        to={pages.admin.href()}
        variant={here ? 'light' : 'subtle'}
        size="sm"
        leftSection={<IconSettings size={18} aria-hidden />}
        aria-current={here ? 'page' : undefined}
        className={classes.adminLink}
        classNames={{ section: classes.adminIcon }}
      >
        {/* On the narrowest phones the gear alone (its name stays "Admin"): the header keeps one row. */}
        <span className={classes.adminLabel}>Admin</span>
      </Button>
    </nav>
  );
}

/**
 * The frame of every page: a skip link, the header with the product name (and "Admin" for admins, and
 * the signed-in person's menu), and the `<main>` landmark.
 */
export function RootLayout() {
  const navigation = useNavigation();
  const wide = useMatches().some((match) => isWide(match.handle));
  return (
    // No padding of the shell's own on a phone: the page's container has its margins, and two of them
    // would leave 256 of 320 px for the page. ('0rem', not 0: the shell adds it to the header's height
    // in a calc(), where a bare 0 is invalid and the page would start under the header.)
    <AppShell header={{ height: 56 }} padding={{ base: '0rem', sm: 'md' }}>
      <a href={`#${MAIN_CONTENT_ID}`} className={classes.skipLink}>
        Skip to content
      </a>
      <AppShell.Header>
        {navigation.state === 'loading' && (
          // Purely visual: the page's own loader announces itself; this only shows that a click registered.
          <div className={classes.progress} aria-hidden />
        )}
        <Container size={wide ? 'xl' : 'md'} h="100%">
          {/* One row at any width: wrapping would put "Admin" and the menu below the header, over the page. */}
          <Group h="100%" justify="space-between" wrap="nowrap" gap="xs">
            <Anchor component={Link} to={pages.home.href()} underline="never" c="inherit" className={classes.brand}>
              <Group gap={8} wrap="nowrap">
                <IconShieldLock size={24} aria-hidden className={classes.brandIcon} />
                <Text component="span" fw={700} size="lg">
                  {PRODUCT_NAME}
                </Text>
              </Group>
            </Anchor>
            <Group gap="xs" wrap="nowrap">
              <AdminLink />
              <UserMenu />
            </Group>
          </Group>
        </Container>
      </AppShell.Header>
      <AppShell.Main id={MAIN_CONTENT_ID} tabIndex={-1} className={classes.main}>
        <Container size={wide ? 'xl' : 'md'} py="lg">
          <Outlet />
        </Container>
      </AppShell.Main>
    </AppShell>
  );
}
