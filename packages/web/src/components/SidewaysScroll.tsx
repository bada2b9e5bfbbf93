import { Group, Text } from '@mantine/core';
import { IconArrowsHorizontal } from '@tabler/icons-react';
import { useId, useLayoutEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import classes from './SidewaysScroll.module.css';

/** Whether an element's content is wider than the element (it scrolls sideways), kept up to date as either resizes. */
function useScrollsSideways(ref: RefObject<HTMLElement | null>): boolean {
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const check = () => setScrolls(element.scrollWidth > element.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, [ref]);
  return scrolls;
}

/**
 * Content that may be wider than the screen (a table's columns): it scrolls sideways inside its frame,
 * never the page, and while it does it says so ("Scroll sideways to see every column") above it and to
 * screen readers, as a named region that Tab reaches and the arrow keys move.
 */
export function SidewaysScroll({ label, children }: { label: string; children: ReactNode }) {
  const scroller = useRef<HTMLDivElement>(null);
  const scrolls = useScrollsSideways(scroller);
  const hintId = useId();
  return (
    <>
      {scrolls && (
        <Group gap={6} mb="xs" wrap="nowrap" c="dimmed" id={hintId} data-scroll-hint>
          <IconArrowsHorizontal size={16} aria-hidden />
          <Text size="xs">Scroll sideways to see every column.</Text>
        </Group>
      )}
      <div
        ref={scroller}
        className={classes.scroller}
        data-scrolls
        // Only while it scrolls: a region to reach with Tab and move with the arrow keys, described by the hint.
        {...(scrolls ? { role: 'region', 'aria-label': label, 'aria-describedby': hintId, tabIndex: 0 } : {})}
      >
        {children}
      </div>
    </>
  );
}
