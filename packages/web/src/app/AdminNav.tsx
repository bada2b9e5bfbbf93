import { NavLink, Text } from '@mantine/core';
import { IconAppWindow, IconKey, IconLayoutDashboard, IconListDetails, IconUsers } from '@tabler/icons-react';
import { Link, useLocation } from 'react-router';
import { paths } from '../config/paths';
import classes from './AdminNav.module.css';

interface NavItem {
  label: string;
  href: string;
  icon: typeof IconUsers;
  /** Whether the current path belongs to this item. */
  matches: (pathname: string) => boolean;
}

const trim = (pathname: string) => pathname.replace(/\/+$/, '') || '/';

const ITEMS: NavItem[] = [
  { label: 'Dashboard', href: paths.admin.getHref(), icon: IconLayoutDashboard, matches: (p) => trim(p) === paths.admin.path },
  { label: 'Users', href: paths.adminUsers.getHref(), icon: IconUsers, matches: (p) => trim(p).startsWith(paths.adminUsers.path) },
  { label: 'Apps', href: paths.adminApps.getHref(), icon: IconAppWindow, matches: (p) => trim(p).startsWith(paths.adminApps.path) },
  { label: 'Providers', href: paths.adminProviders.getHref(), icon: IconKey, matches: (p) => trim(p).startsWith(paths.adminProviders.path) },
  { label: 'Audit log', href: paths.adminAudit.getHref(), icon: IconListDetails, matches: (p) => trim(p).startsWith(paths.adminAudit.path) },
];

/** The admin console's own navigation: beside the page on wide screens, above it on narrow ones. */
export function AdminNav() {
  const { pathname } = useLocation();
  return (
    <nav aria-label="Admin" className={classes.nav}>
      <Text size="xs" fw={700} tt="uppercase" c="dimmed" px="sm" pb={6} className={classes.heading}>
        Admin console
      </Text>
      <ul className={classes.list}>
        {ITEMS.map((item) => {
          const active = item.matches(pathname);
          return (
            <li key={item.label}>
              <NavLink
                component={Link}
                to={item.href}
                label={item.label}
                leftSection={<item.icon size={18} aria-hidden />}
                active={active}
                aria-current={active ? 'page' : undefined}
                className={classes.link}
              />
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
