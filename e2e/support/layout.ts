import type { Page } from '@playwright/test';

/** The few DOM types the check reads in the page (the tests are type-checked without the DOM library). */
interface Rect {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}
interface Style {
  overflowX: string;
  textOverflow: string;
  display: string;
  visibility: string;
  position: string;
}
interface Element {
  tagName: string;
  textContent: string | null;
  scrollWidth: number;
  clientWidth: number;
  children: ArrayLike<Element>;
  childNodes: ArrayLike<{ nodeType: number; textContent: string | null }>;
  parentElement: Element | null;
  getBoundingClientRect(): Rect;
  getAttribute(name: string): string | null;
  closest(selector: string): Element | null;
  hasAttribute(name: string): boolean;
  querySelectorAll(selector: string): ArrayLike<Element>;
}
interface Window {
  innerWidth: number;
  document: { documentElement: Element; body: Element; querySelectorAll(selector: string): ArrayLike<Element>; getElementById(id: string): Element | null };
  getComputedStyle(element: Element): Style;
}

/**
 * What does not fit a screen of this width, in words (empty when all is well):
 * - the page itself scrolls sideways (the document is wider than the screen): anything wider than the
 *   screen must sit inside an element meant to scroll;
 * - something scrolls sideways without saying so: any scroll container but a code block must be meant to
 *   (`data-scrolls`) and described by a hint in sight (`aria-describedby`, the tables' "Scroll sideways");
 * - text cut off with an ellipsis and nothing to read it whole (no `title` on it or around it), or
 *   clipped at an edge without one (a button's label), or a word running over its box's edge;
 * - text squeezed into a column a few characters wide (a value printed one character per line);
 * - the header's content outside the header (wrapped below it, over the page), or the page's under it.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const win = globalThis as unknown as Window;
    const doc = win.document;
    const problems: string[] = [];
    const describe = (element: Element) => {
      const name = element.tagName.toLowerCase();
      const testId = element.getAttribute('data-testid');
      const text = (element.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
      return `<${name}${testId ? ` data-testid="${testId}"` : ''}> "${text}"`;
    };
    const visible = (element: Element) => {
      const style = win.getComputedStyle(element);
      const rect = element.getBoundingClientRect();
      // Visually hidden text (1 px, clipped) is for screen readers: it is not laid out for the eye.
      return style.display !== 'none' && style.visibility !== 'hidden' && rect.width > 1 && rect.height > 1;
    };
    const ownText = (element: Element) => Array.from(element.childNodes).some((node) => node.nodeType === 3 && (node.textContent ?? '').trim() !== '');
    const all = Array.from(doc.querySelectorAll('body *')).filter((element) => !element.closest('svg') && !element.closest('[data-portal]'));
    const scrollsSideways = (element: Element) => {
      const overflow = win.getComputedStyle(element).overflowX;
      return (overflow === 'auto' || overflow === 'scroll') && element.scrollWidth > element.clientWidth + 1;
    };

    const width = win.innerWidth;
    const pageWidth = doc.documentElement.scrollWidth;
    if (pageWidth > width + 1) {
      // Name the widest culprits: elements past the right edge, not inside a scroll container.
      const culprits = all.filter((element) => {
        if (!visible(element) || element.getBoundingClientRect().right <= width + 1) return false;
        for (let parent = element.parentElement; parent; parent = parent.parentElement) {
          if (win.getComputedStyle(parent).overflowX !== 'visible') return false;
        }
        return true;
      });
      // The innermost ones say the most.
      const innermost = culprits.filter((element) => !culprits.some((other) => other !== element && other.parentElement === element));
      problems.push(`the page is ${pageWidth} px wide on a ${width} px screen: ${innermost.slice(0, 4).map(describe).join(', ')}`);
    }
    for (const element of all) {
      if (!visible(element)) continue;
      // Code blocks scroll as code does; anything else that scrolls sideways says so, in a hint it names.
      if (scrollsSideways(element) && element.tagName !== 'PRE') {
        const hint = element.getAttribute('aria-describedby');
        const hintShown = hint !== null && hint.split(/\s+/).some((id) => {
          const said = doc.getElementById(id);
          return said !== null && visible(said);
        });
        if (!element.hasAttribute('data-scrolls') || !hintShown) problems.push(`scrolls sideways without saying so: ${describe(element)}`);
      }
      const style = win.getComputedStyle(element);
      const overflows = element.scrollWidth > element.clientWidth + 1;
      if (overflows && style.textOverflow === 'ellipsis' && !element.closest('[title]')) {
        problems.push(`cut off: ${describe(element)}`);
      } else if (overflows && (style.overflowX === 'hidden' || style.overflowX === 'clip') && ownText(element)) {
        // Clipped without even an ellipsis: a button's label past its edge.
        problems.push(`clipped: ${describe(element)}`);
      } else if (overflows && style.overflowX === 'visible' && style.display !== 'inline' && ownText(element) && !element.closest('pre')) {
        // A word longer than its box (a path in a title) runs over the box's edge, and a card around it clips it.
        problems.push(`runs over its edge: ${describe(element)}`);
      }
    }
    // Text in a column too narrow to read: a leaf of 16+ characters laid out under 3 characters wide.
    for (const element of all) {
      if (element.children.length > 0 || !visible(element)) continue;
      const text = (element.textContent ?? '').trim();
      if (text.length >= 16 && !/\s/.test(text.slice(0, 16)) && element.getBoundingClientRect().width < 30) {
        problems.push(`squeezed into a column ${Math.round(element.getBoundingClientRect().width)} px wide: ${describe(element)}`);
      }
    }
    const header = doc.querySelectorAll('header')[0];
    if (header && visible(header)) {
      const box = header.getBoundingClientRect();
      for (const element of Array.from(header.querySelectorAll('*'))) {
        if (!visible(element)) continue;
        const rect = element.getBoundingClientRect();
        if (rect.bottom > box.bottom + 1 || rect.top < box.top - 1 || rect.right > width + 1 || rect.left < -1) {
          problems.push(`outside the header: ${describe(element)}`);
          break;
        }
      }
      // A fixed header: the page's content starts below it (at the top of the page, where it is checked).
      const main = doc.querySelectorAll('main')[0];
      const hiddenUnder = main ? Array.from(main.querySelectorAll('*')).find((element) => visible(element) && element.getBoundingClientRect().top < box.bottom - 1) : undefined;
      if (hiddenUnder) problems.push(`under the header: ${describe(hiddenUnder)}`);
    }
    return problems;
  });
}
