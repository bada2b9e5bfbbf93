/**
 * The providers' setup guides, the pages of docs/providers/ a kind's preset names (`docs:`), bundled
 * with the console at build time (each its own small chunk, loaded when opened): the console links to
 * the guide itself, served by the same Gatehouse, online or not, and the documentation stays the one
 * source of the steps. docs/providers/README.md, what every provider registers, is the "overview".
 */
const FOLDER = '../../../../../../docs/providers/';
const GUIDES = import.meta.glob<string>('../../../../../../docs/providers/*.md', { query: '?raw', import: 'default' });
const OVERVIEW = 'overview';

const fileOf = (name: string) => `${FOLDER}${name === OVERVIEW ? 'README' : name}.md`;

function loaderOf(name: string): (() => Promise<string>) | undefined {
  // Names come from the address bar: only a plain name, never a path.
  if (!/^[a-z0-9-]+$/.test(name)) return undefined;
  const file = fileOf(name);
  return Object.hasOwn(GUIDES, file) ? GUIDES[file] : undefined;
}

/** A guide's name for a path of the documentation ("docs/providers/google.md" → "google"), if the console has that guide. */
export function guideName(docsPath: string): string | undefined {
  const match = /^docs\/providers\/([A-Za-z0-9-]+)\.md(?:#[\w-]*)?$/.exec(docsPath);
  if (!match) return undefined;
  const name = match[1] === 'README' ? OVERVIEW : match[1]!;
  return loaderOf(name) ? name : undefined;
}

/** A guide's text (Markdown), or undefined when the console has no guide of that name. */
export async function loadGuide(name: string): Promise<string | undefined> {
  return loaderOf(name)?.();
}

export type GuideLink =
  /** Another guide, opened in the console. */
  | { kind: 'guide'; name: string; hash: string }
  /** A web address, opened as it is. */
  | { kind: 'web'; href: string }
  /** Another page of the documentation, which the console does not show: named by its path. */
  | { kind: 'docs'; path: string };

/** Where a link inside a guide (relative to docs/providers/) leads. */
export function guideLink(href: string): GuideLink {
  if (/^https:\/\//i.test(href)) return { kind: 'web', href };
  const [target = '', hash = ''] = href.split('#', 2);
  const path = new URL(target || '.', 'https://docs.invalid/docs/providers/').pathname.slice(1);
  const name = guideName(path);
  if (name) return { kind: 'guide', name, hash: hash ? `#${hash}` : '' };
  return { kind: 'docs', path: `${path}${hash ? `#${hash}` : ''}` };
}
