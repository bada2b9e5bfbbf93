import { Badge, Button, createTheme, DataList, Title, type CSSVariablesResolver } from '@mantine/core';
import classes from './theme.module.css';

/**
 * Mantine's defaults, adjusted for WCAG AA contrast (axe must find no serious violations):
 * - primary shade 8 in light mode: white on blue.6 is 3.6:1, on blue.8 it is 5.0:1;
 * - "dimmed" text one step stronger in both schemes: gray.6 on white is 3.3:1 (gray.7: 8.2:1), and
 *   dark.2 on the dark body is 4.0:1 (dark.1: 7.8:1);
 * - text of the blue "light" variant (the active admin nav link, the header's "Admin") one shade darker
 *   in light mode: blue.8 on its tint is 4.5:1 and less when hovered, blue.9 is 5.4:1;
 * - the error colour (field errors, invalid borders) darker in light mode: red.6 on white is 3.9:1,
 *   red.8 is 5.9:1; and lighter in dark mode, where red.8 on the dark body is 2.9:1 and red.4 is 5.6:1.
 * Modal headers are plain `div`s: Mantine's `<header>` reads as a second `banner` landmark in the
 * accessibility tree, beside the page's own header.
 * Fonts are the system stack: no web fonts, the machine may be offline and the CSP allows none.
 * On a phone the page title is smaller (26 px at 320 px, the full 34 px from about 700 px up), so a
 * name in it ("Welcome, Alice Example") takes two lines, not four; labelled lists put each label over
 * its value. Badges, buttons and titles are never cut off: they wrap (theme.module.css).
 */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'md',
  cursorType: 'pointer',
  headings: {
    sizes: {
      h1: { fontSize: 'clamp(1.625rem, 1.2rem + 2.2vw, 2.125rem)' },
    },
  },
  components: {
    ModalHeader: { defaultProps: { component: 'div' } },
    Badge: Badge.extend({ classNames: { root: classes.badge, label: classes.badgeLabel } }),
    Button: Button.extend({ classNames: { root: classes.button, inner: classes.buttonInner, label: classes.buttonLabel } }),
    Title: Title.extend({ classNames: { root: classes.title } }),
    DataList: DataList.extend({ classNames: { item: classes.dataListItem, itemLabel: classes.dataListLabel } }),
  },
});

export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-blue-light-color': 'var(--mantine-color-blue-9)',
    '--mantine-color-error': 'var(--mantine-color-red-8)',
  },
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-error': 'var(--mantine-color-red-4)',
  },
});
