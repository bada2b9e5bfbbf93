import { pages } from '@gatehouse/contract';
import { NavLink, Text } from '@mantine/core';
import { IconAppWindow, IconKey, IconLayoutDashboard, IconListDetails, IconUsers } from '@tabler/icons-react';
import { Link, useLocation } from 'react-router';
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
  { label: 'Dashboard', href: pages.admin.href(), icon: IconLayoutDashboard, matches: (p) => trim(p) === pages.admin.path },
  { label: 'Users', href: pages.adminUsers.href(), icon: IconUsers, matches: (p) => trim(p).startsWith(pages.adminUsers.path) },
  { label: 'Apps', href: pages.adminApps.href(), icon: IconAppWindow, matches: (p) => trim(p).startsWith(pages.adminApps.path) },
  { label: 'Providers', href: pages.adminProviders.href(), icon: IconKey, matches: (p) => trim(p).startsWith(pages.adminProviders.path) },
  { label: 'Audit log', href: pages.adminAudit.href(), icon: IconListDetails, matches: (p) => trim(p).startsWith(pages.adminAudit.path) },
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
