import { Anchor, Group } from '@mantine/core';
import { IconArrowLeft } from '@tabler/icons-react';
import { Link } from 'react-router';
import { paths } from '../../../config/paths';

/** "All providers": back to the list from a provider's page. */
export function BackToProviders() {
  return (
    <Anchor component={Link} to={paths.adminProviders.getHref()} size="sm" fw={600}>
      <Group gap={4} component="span" wrap="nowrap">
        <IconArrowLeft size={16} aria-hidden />
        All providers
      </Group>
    </Anchor>
  );
}
