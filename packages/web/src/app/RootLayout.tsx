import { Anchor, AppShell, Container, Group, Text } from '@mantine/core';
import { IconShieldLock } from '@tabler/icons-react';
import { Link, Outlet, useNavigation } from 'react-router';
import { paths } from '../config/paths';
import { PRODUCT_NAME } from '../config/product';
import classes from './RootLayout.module.css';

export const MAIN_CONTENT_ID = 'main-content';

/** The frame of every page: a skip link, the header with the product name, and the `<main>` landmark. */
export function RootLayout() {
  const navigation = useNavigation();
  return (
    <AppShell header={{ height: 56 }} padding="md">
      <a href={`#${MAIN_CONTENT_ID}`} className={classes.skipLink}>
        Skip to content
      </a>
      <AppShell.Header>
        {navigation.state === 'loading' && (
          // Purely visual: the page's own loader announces itself; this only shows that a click registered.
          <div className={classes.progress} aria-hidden />
        )}
        <Container size="md" h="100%">
          <Group h="100%" justify="space-between">
            <Anchor component={Link} to={paths.home.getHref()} underline="never" c="inherit" className={classes.brand}>
              <Group gap={8} wrap="nowrap">
                <IconShieldLock size={24} aria-hidden className={classes.brandIcon} />
                <Text component="span" fw={700} size="lg">
                  {PRODUCT_NAME}
                </Text>
              </Group>
            </Anchor>
          </Group>
        </Container>
      </AppShell.Header>
      <AppShell.Main id={MAIN_CONTENT_ID} tabIndex={-1} className={classes.main}>
        <Container size="md" py="lg">
          <Outlet />
        </Container>
      </AppShell.Main>
    </AppShell>
  );
}
