import { Anchor, Group } from '@mantine/core';
import { IconArrowLeft } from '@tabler/icons-react';
import { Link } from 'react-router';
import { paths } from '../../../config/paths';

/** "All apps": back to the list from an app's page. */
export function BackToApps() {
  return (
    <Anchor component={Link} to={paths.adminApps.getHref()} size="sm" fw={600}>
      <Group gap={4} component="span" wrap="nowrap">
        <IconArrowLeft size={16} aria-hidden />
        All apps
      </Group>
    </Anchor>
  );
}
