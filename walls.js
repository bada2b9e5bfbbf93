import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The walls (docs/architecture.md, "Walls"), as data, in one place: eslint.config.js turns them into
 * `import-x/no-restricted-paths` zones, which judge the file an import resolves to (so `../../area/x.js`
 * from any depth is judged like `../area/x.js`), and packages/server/test/architecture.test.ts checks the
 * server's whole import graph against `refusal` below. packages/server/test/walls.test.ts plants an
 * import from every area into every other and asserts that lint and `refusal` agree.
 */

/** The server's source folder, from the repository's root. */
export const SERVER = 'packages/server/src';

/**
 * The server's layers, bottom first. An area is a folder of src/ or a file directly in it. A file imports
 * its own area and the areas of the layers below; the areas of one layer never import each other.
 * A new area is one entry here (and a line in docs/architecture.md).
 * @type {readonly (readonly string[])[]}
 */
export const LAYERS = [
  ['config'],
  ['storage', 'cluster', 'errors.ts', 'logger.ts'],
  ['events'],
  ['keys', 'secrets.ts'],
  ['http'],
  ['operations', 'limits'],
  ['accounts', 'apps', 'audit'],
  ['sessions'],
  ['authorize', 'providers'],
  ['authenticate', 'proxy', 'provide'],
  ['admin', 'api'],
];

/**
 * The composition root: it builds the server from every area (cli/ holds one file per command main.ts
 * runs), so it may import anything, and nothing in the layers imports it.
 * @type {readonly string[]}
 */
export const COMPOSITION_ROOT = ['app.ts', 'services.ts', 'main.ts', 'devServices.ts', 'reload.ts', 'cli'];

/**
 * The areas that import less than every layer below them: area → the only areas it may import, and why.
 * @type {Readonly<Record<string, { imports: readonly string[]; why: string }>>}
 */
export const NARROWER = {
  config: { imports: [], why: 'config/ is at the bottom: it imports nothing from the rest of the server.' },
  storage: { imports: ['config'], why: 'storage/ knows no feature: it imports only config/.' },
  cluster: { imports: ['config'], why: "cluster/ carries messages between a node's processes and knows no feature: it imports only config/." },
  events: { imports: ['config', 'storage', 'cluster'], why: 'events/ carries changes and knows no feature: it imports only config/, storage/ and cluster/.' },
  keys: { imports: ['config', 'storage', 'events'], why: 'keys/ knows no feature: it imports only config/, storage/ and events/ (take anything else as an interface).' },
};

const NOT_AUTHENTICATE = 'takes what it needs of authenticate/ and providers/ (the code that talks to IdPs) as an interface it defines, and never imports them.';

/**
 * Arrows refused with a reason of their own, whatever the layers say: `to` is imported only by
 * `onlyBy`, or never by `notBy`.
 * @type {readonly { to: readonly string[]; onlyBy?: readonly string[]; notBy?: readonly string[]; why: string }[]}
 */
export const NAMED_WALLS = [
  { to: ['services.ts'], onlyBy: COMPOSITION_ROOT, why: 'Only the composition root (app.ts, services.ts, main.ts, devServices.ts, reload.ts, cli/) sees Services: declare the dependencies this module takes.' },
  { to: ['admin', 'api'], onlyBy: COMPOSITION_ROOT, why: 'admin/ and api/ are the edges: only the composition root registers them.' },
  { to: ['cli'], onlyBy: ['main.ts'], why: 'cli/ holds the commands main.ts runs: nothing else imports them.' },
  { to: ['authenticate', 'providers'], notBy: ['sessions', 'authorize', 'proxy', 'provide'], why: `sessions/, authorize/, proxy/ and provide/ each ${NOT_AUTHENTICATE}` },
];

const AREAS = LAYERS.flat();
const ALL = [...AREAS, ...COMPOSITION_ROOT];

/** The area of a file given relative to src/ with forward slashes: its first folder, or the file itself. */
export const areaOf = (/** @type {string} */ file) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

/** An area's layer (0 is the bottom), or -1 for an area no layer holds. */
export const layerOf = (/** @type {string} */ area) => LAYERS.findIndex((layer) => layer.includes(area));

/** What an area of the layers may import besides itself: its narrower list, or every layer below it. */
export function mayImport(/** @type {string} */ area) {
  return NARROWER[area]?.imports ?? LAYERS.slice(0, Math.max(layerOf(area), 0)).flat();
}

/** The named walls that stand between `area` and what they protect. */
function namedWallsOf(/** @type {string} */ area) {
  return NAMED_WALLS.filter((wall) => !wall.to.includes(area) && (wall.onlyBy ? !wall.onlyBy.includes(area) : (wall.notBy ?? []).includes(area)));
}

/** The reason an area of the layers may import no more than it does. */
function layerWhy(/** @type {string} */ area) {
  if (NARROWER[area]) return NARROWER[area].why;
  const below = mayImport(area).map((other) => (other.endsWith('.ts') ? other : `${other}/`));
  const name = area.endsWith('.ts') ? area : `${area}/`;
  return below.length === 0
    ? `${name} imports nothing from the rest of the server.`
    : `${name} imports only the layers below it (${below.join(', ')}): the layers (docs/architecture.md, "Walls") only import downwards; take what you need from above as a dependency.`;
}

/**
 * Why the server file `from` may not import the server file `to` (both relative to src/, forward
 * slashes), or undefined when it may.
 */
export function refusal(/** @type {string} */ from, /** @type {string} */ to) {
  const [a, b] = [areaOf(from), areaOf(to)];
  if (a === b) return undefined;
  const named = namedWallsOf(a).find((wall) => wall.to.includes(b));
  if (named) return named.why;
  if (COMPOSITION_ROOT.includes(a)) return undefined;
  if (layerOf(a) === -1) return `${a} has no layer: add it to LAYERS in walls.js (and to docs/architecture.md).`;
  return mayImport(a).includes(b) ? undefined : layerWhy(a);
}

/**
 * @typedef {{ target: string | string[]; from: string | string[]; except?: string[]; message: string }} Zone
 */

/** The server's walls as `import-x/no-restricted-paths` zones (paths from the repository's root). */
export function serverZones() {
  const at = (/** @type {string} */ area) => `${SERVER}/${area}`;
  /** @type {Zone[]} */
  const zones = [];
  for (const area of ALL) {
    const named = namedWallsOf(area);
    for (const wall of named) zones.push({ target: at(area), from: wall.to.map(at), message: wall.why });
    if (COMPOSITION_ROOT.includes(area)) continue;
    // Everything in src/ but the area itself, what it may import, and what a named wall already refuses
    // with its own reason: a new folder nobody has placed yet is refused too.
    const except = [area, ...mayImport(area), ...named.flatMap((wall) => wall.to)].map((other) => `./${other}`);
    zones.push({ target: at(area), from: SERVER, except: [...new Set(except)], message: layerWhy(area) });
  }
  return zones;
}

/** The web's source folder, from the repository's root. */
export const WEB = 'packages/web/src';

/**
 * The web's walls (bulletproof-react's habit): a feature (features/<name>/) imports no other feature,
 * only the shared code (components/, lib/, config/) and the contract; the entries (app/ with its routes,
 * signIn/, main.tsx) import features, never the other way; the shared code imports neither.
 * @param {string} root the repository's root
 */
export function webZones(root) {
  const features = readdirSync(path.join(root, WEB, 'features'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const ENTRIES = ['app', 'signIn', 'main.tsx'].map((entry) => `${WEB}/${entry}`);
  const SHARED = ['components', 'lib', 'config'].map((shared) => `${WEB}/${shared}`);
  return [
    ...features.map((feature) => ({
      target: `${WEB}/features/${feature}`,
      from: `${WEB}/features`,
      except: [`./${feature}`],
      message: 'A feature imports no other feature: move what both need to components/ or lib/, or compose them in a route (app/routes/).',
    })),
    { target: `${WEB}/features`, from: ENTRIES, message: 'The routes (app/) and the sign-in page import features, never the other way: take what a feature needs as a prop.' },
    { target: SHARED, from: [`${WEB}/features`, ...ENTRIES], message: 'Shared code (components/, lib/, config/) imports no feature and no route: it is used by them.' },
  ];
}

/** The contract's source folder, from the repository's root. */
export const CONTRACT = 'packages/contract/src';

/** The contract runs in the server and in the browser: its relative imports stay in its own files. */
export function contractZones() {
  return [{ target: CONTRACT, from: 'packages', except: ['./contract/src'], message: 'The contract is shared by the server and the front end: it imports only zod and its own files.' }];
}
