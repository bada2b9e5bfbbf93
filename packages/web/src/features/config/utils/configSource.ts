import { stringify } from 'yaml';

/** How the console names where read-only items come from. */
export interface ConfigSourceLabel {
  /** Short, for a badge: "From gatehouse.yaml", "Built-in default". */
  badge: string;
  /** Whole, for the summary: "Defined in /etc/gatehouse/gatehouse.yaml", "Built-in development default". */
  title: string;
}

/** `file` as the server reports it: the path it read, or null for the built-in development defaults. */
export function configSourceLabel(file: string | null | undefined): ConfigSourceLabel {
  if (!file) return { badge: 'Built-in default', title: 'Built-in development default' };
  const name = file.split(/[\\/]/).pop() || file;
  return { badge: `From ${name}`, title: `Defined in ${file}` };
}

/**
 * An entry as it would be written in the configuration file, under its list (`apps:`, `providers:`),
 * to paste into another file. Empty lists and objects are left out, as one would write it by hand.
 */
export function entryAsYaml(list: 'apps' | 'providers', entry: Record<string, unknown>): string {
  const written = Object.fromEntries(
    Object.entries(entry).filter(([, value]) => {
      if (value === undefined || value === null) return false;
      if (Array.isArray(value)) return value.length > 0;
      if (typeof value === 'object') return Object.keys(value).length > 0;
      return true;
    }),
  );
  return stringify({ [list]: [written] }, { lineWidth: 0 });
}
