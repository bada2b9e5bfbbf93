/**
 * `${NAME}` and `${NAME:-fallback}` in YAML string values are replaced from the environment, so secrets
 * stay out of the file. Interpolation runs on the parsed tree (never on raw YAML text), so a value from
 * the environment can never change the structure of the document. `$${` escapes a literal `${`.
 */
const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export class InterpolationError extends Error {
  constructor(
    readonly path: string,
    readonly variable: string,
  ) {
    super(`${path}: environment variable ${variable} is not set`);
  }
}

export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (whole, escaped: string | undefined, name: string, fallback?: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new InterpolationError(path || '(root)', name);
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, path ? `${path}.${key}` : key)]),
    );
  }
  return value;
}
