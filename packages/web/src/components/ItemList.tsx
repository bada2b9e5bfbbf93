import type { ReactNode } from 'react';
import classes from './ItemList.module.css';

/**
 * The rows of an account section (sessions, identities) as a real list: one `<li>` per row, an icon
 * and text on the left, actions on the right that wrap below the text on a narrow screen.
 */
export function ItemList({ children, label }: { children: ReactNode; label?: string }) {
  return (
    <ul className={classes.list} aria-label={label}>
      {children}
    </ul>
  );
}

export interface ItemProps {
  /** The row's description: name, badges, facts. */
  children: ReactNode;
  /** Buttons; left out when the row has none. */
  actions?: ReactNode;
  /** Extra attributes for tests and styling (`data-current`). */
  [data: `data-${string}`]: string | boolean | undefined;
}

export function Item({ children, actions, ...data }: ItemProps) {
  return (
    <li className={classes.item} {...data}>
      <div className={classes.main}>{children}</div>
      {actions && <div className={classes.actions}>{actions}</div>}
    </li>
  );
}
