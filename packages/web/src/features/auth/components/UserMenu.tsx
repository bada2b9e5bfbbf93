import { endpoints, pages, type User } from '@gatehouse/contract';
import { Avatar, Menu, Text, UnstyledButton } from '@mantine/core';
import { IconApps, IconChevronDown, IconLogout, IconUserCircle } from '@tabler/icons-react';
import { useId } from 'react';
import { Link } from 'react-router';
import { avatarColor } from '../../../lib/avatarColor';
import { useCsrfToken } from '../../../lib/csrf';
import { useSession } from '../api/getSession';
import classes from './UserMenu.module.css';

function SignedInMenu({ user }: { user: Pick<User, 'name' | 'email'> }) {
  const csrf = useCsrfToken();
  const signOutFormId = useId();
  const label = user.name || user.email;
  return (
    <>
      {/* Signing out is a real form post, as the sign-out button's. The form sits outside the menu (a
          menu holds only its items), and the menu's item submits it. */}
      <form id={signOutFormId} method="post" action={endpoints.signOut} hidden>
        <input type="hidden" name="csrf_token" value={csrf.data ?? ''} />
      </form>
      {/* No focus placeholder: a focusable "presentation" div in a menu is an item of no kind to assistive tech. */}
      <Menu position="bottom-end" width={220} withinPortal withInitialFocusPlaceholder={false}>
        <Menu.Target>
          <UnstyledButton className={classes.trigger} aria-label={`Account menu: ${label} (${user.email})`} title={user.email}>
            <Avatar name={label} color={avatarColor(label)} variant="filled" size={30} radius="xl" alt="" aria-hidden />
            <Text component="span" size="sm" fw={500} className={classes.name} aria-hidden>
              {label}
            </Text>
            <IconChevronDown size={14} aria-hidden />
          </UnstyledButton>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Item component={Link} to={pages.home.href()} leftSection={<IconApps size={16} aria-hidden />}>
            Your apps
          </Menu.Item>
          <Menu.Item component={Link} to={pages.account.href()} leftSection={<IconUserCircle size={16} aria-hidden />}>
            Account
          </Menu.Item>
          <Menu.Divider />
          <Menu.Item
            component="button"
            type="submit"
            form={signOutFormId}
            disabled={!csrf.data}
            closeMenuOnClick={false}
            leftSection={<IconLogout size={16} aria-hidden />}
          >
            Sign out
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
    </>
  );
}

/**
 * The signed-in person in the header of every portal page: who they are, and their apps, their account
 * and signing out one click away. Nothing for a signed-out visitor (the page itself offers sign-in).
 */
export function UserMenu() {
  const session = useSession();
  const user = session.data?.user;
  return user ? <SignedInMenu user={user} /> : null;
}
