import { Badge, NavLink, Text, Tooltip } from '@mantine/core';
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
  { label: 'Audit log', href: paths.adminAudit.getHref(), icon: IconListDetails, matches: (p) => trim(p).startsWith(paths.adminAudit.path) },
];

/** Areas of the console that are planned but not built yet: shown, so admins know they are coming. */
const COMING_SOON: Array<{ label: string; icon: typeof IconUsers }> = [
  { label: 'Providers', icon: IconKey },
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
        {COMING_SOON.map((item) => (
          <li key={item.label}>
            <Tooltip label="Coming soon" position="right" openDelay={150} events={{ hover: true, focus: true, touch: true }}>
              {/* Focusable (aria-disabled, not disabled) so keyboard users reach the tooltip too. */}
              <NavLink
                component="button"
                type="button"
                aria-disabled="true"
                label={item.label}
                leftSection={<item.icon size={18} aria-hidden />}
                rightSection={
                  <Badge size="xs" variant="light" color="gray" tt="none">
                    Soon
                  </Badge>
                }
                className={`${classes.link} ${classes.soon}`}
                onClick={(event) => event.preventDefault()}
              />
            </Tooltip>
          </li>
        ))}
      </ul>
    </nav>
  );
}
