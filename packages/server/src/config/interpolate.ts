/**
 * `${NAME}` and `${NAME:-fallback}` in YAML string values are replaced from the environment, so secrets
 * stay out of the file. Interpolation runs on the parsed tree (never on raw YAML text), so a value from
 * the environment can never change the structure of the document. `$${` escapes a literal `${`.
 */
const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** A `${NAME}` without a fallback whose variable is unset or empty, and the key it is in. */
export interface MissingVariable {
  path: Array<string | number>;
  variable: string;
}

/**
 * The tree with every reference replaced. A reference to a variable that is not set is left as it is
 * written and recorded in `missing`: every one is found in one pass (an operator setting up a new
 * environment hears of all of them at once), and the caller refuses the configuration.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, missing: MissingVariable[] = [], path: Array<string | number> = []): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (whole, escaped: string | undefined, name: string, fallback?: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      missing.push({ path, variable: name });
      return whole;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, missing, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, missing, [...path, key])]));
  }
  return value;
}
