import { DEFAULT_PORT, developmentDefaults } from './defaults.js';
import { EXTENDS_DEVELOPMENT_DEFAULTS } from './schema.js';

/** The lists merged by id, and the key that identifies their entries. */
const KEYED_LISTS: Readonly<Record<string, string>> = {
  apps: 'id',
  providers: 'id',
  'development.idps': 'providerId',
};

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `extends: development-defaults` at the top of gatehouse.yaml: the file adds to the built-in
 * development defaults (the development IdPs, the demo app and its two apps, the admins, the metrics
 * listener) instead of replacing them, so trying one setting — an app behind nginx, a second
 * Gatehouse on another port — does not mean writing the whole default start out by hand.
 *
 * The merge is one rule, applied at every depth, so what a file ends up saying can be read off it:
 * - a mapping merges key by key with the defaults' mapping of the same key;
 * - a list of entries with ids (`apps`, `providers` by `id`; `development.idps` by `providerId`)
 *   merges entry by entry: an entry whose id the defaults have merges into that entry as a mapping,
 *   in the file's place; the defaults' other entries follow the file's. (The file's entries keep their
 *   indexes, so a problem in one is reported at the place the file has it.)
 * - anything else — a scalar, a list of plain values (`trustedProxies`, `admins.emails`) — replaces
 *   the defaults' value.
 *
 * The defaults are laid out around the file's `listen.port` (defaults.ts). Development only: in
 * production mode nothing is merged, and the schema refuses the key (config/schema.ts), fail closed.
 *
 * Returns the file as it is when it does not extend the development defaults (or names something
 * else, which the schema then refuses), or asks for production mode; otherwise the development
 * defaults with the file merged in.
 */
export function withDevelopmentDefaults<T>(input: T): T {
  if (!isMapping(input) || input.extends !== EXTENDS_DEVELOPMENT_DEFAULTS || input.mode === 'production') return input;
  return merge(developmentDefaults(portOf(input)), input, '') as T;
}

/** The port the defaults are laid out around: the file's listen.port, when the services fit above it. */
function portOf(input: Mapping): number {
  const port = isMapping(input.listen) ? input.listen.port : undefined;
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65_535 - 9 ? port : DEFAULT_PORT;
}

function merge(base: unknown, over: unknown, path: string): unknown {
  if (isMapping(base) && isMapping(over)) {
    const merged: Mapping = { ...base };
    for (const [key, value] of Object.entries(over)) {
      const next = Object.hasOwn(base, key) ? merge(base[key], value, path ? `${path}.${key}` : key) : value;
      // Defined, not assigned: a key "__proto__" in the file stays a key (the schema refuses it), never
      // the merged object's prototype.
      Object.defineProperty(merged, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
    return merged;
  }
  const idKey = KEYED_LISTS[path];
  if (idKey && Array.isArray(base) && Array.isArray(over)) return mergeById(base, over, idKey, path);
  return over;
}

function mergeById(base: unknown[], over: unknown[], idKey: string, path: string): unknown[] {
  const idOf = (entry: unknown) => (isMapping(entry) && typeof entry[idKey] === 'string' ? entry[idKey] : undefined);
  const named = new Set(over.map(idOf).filter((id) => id !== undefined));
  const fromFile = over.map((entry) => {
    const id = idOf(entry);
    const original = id === undefined ? undefined : base.find((candidate) => idOf(candidate) === id);
    return original === undefined ? entry : merge(original, entry, `${path}[]`);
  });
  return [
    ...fromFile,
    ...base.filter((entry) => {
      const id = idOf(entry);
      return id === undefined || !named.has(id);
    }),
  ];
}
