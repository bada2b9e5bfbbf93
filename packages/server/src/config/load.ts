import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { builtInDefaults, DEV_IDP_CLIENT_ID, DEV_IDP_CLIENT_SECRET } from './defaults.js';
import { withDevelopmentDefaults } from './extendDefaults.js';
import { interpolateEnv, type MissingVariable } from './interpolate.js';
import { ConfigSource, displayName, placeProblems, problemLine, schemaProblems, type ConfigPath, type ConfigProblem, type FoundProblem } from './problems.js';
import { configSchema, type Config, type ConfigInput } from './schema.js';

export const DEFAULT_CONFIG_FILE = 'gatehouse.yaml';

/**
 * A configuration that cannot be used: every problem found (config/problems.ts), each once, in the
 * order of the file. `problems` has one line per problem, with its place in the file when it came
 * from one (`gatehouse.yaml:12:5: providers[0].issuer: must be https …`), else `path: message`.
 */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(
    readonly source: string,
    readonly found: readonly ConfigProblem[],
    /** The file as the operator names it; undefined for a configuration that came from no file. */
    readonly fileName?: string,
  ) {
    const problems = found.map((problem) => problemLine(problem, fileName));
    super(`Invalid configuration (${source}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.problems = problems;
  }
}

export interface LoadedConfig {
  config: Config;
  /** The file it came from, or undefined for the built-in defaults. */
  file: string | undefined;
  /** The file as read, to say where a key is (check-config's warnings); undefined without a file. */
  located?: ConfigSource | undefined;
}

export interface LoadOptions {
  /** Explicit path (from --config); otherwise GATEHOUSE_CONFIG, then ./gatehouse.yaml if present. */
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function resolveConfigFile({ file, env = process.env, cwd = process.cwd() }: LoadOptions): string | undefined {
  const chosen = file ?? env.GATEHOUSE_CONFIG;
  if (chosen) return path.resolve(cwd, chosen);
  const fallback = path.resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = resolveConfigFile({ ...options, env, cwd });
  let raw: unknown = builtInDefaults;
  let located: ConfigSource | undefined;
  if (file) {
    const name = displayName(file, cwd);
    if (!existsSync(file)) throw new ConfigError(file, [{ severity: 'error', message: 'file not found' }], name);
    located = new ConfigSource(readFileSync(file, 'utf8'), name);
    // After a syntax error nothing that follows reads reliably: the YAML's problems, and no guesses.
    if (!located.readable) throw new ConfigError(file, placeProblems(located.problems, located), name);
    raw = located.data();
  }
  return { config: parseConfig(raw, { env, cwd, source: file ?? 'built-in defaults', located }), file, located };
}

/**
 * Validates an already-parsed document: interpolation, environment overrides, schema, derived values.
 * Every problem is found in one pass: each missing variable, each bad key (an unknown key with the one
 * it was probably meant to be), each once; a key whose variable is missing is not judged further.
 */
export function parseConfig(
  raw: unknown,
  {
    env = process.env,
    cwd = process.cwd(),
    source = 'configuration',
    located,
  }: { env?: NodeJS.ProcessEnv; cwd?: string; source?: string; located?: ConfigSource | undefined } = {},
): Config {
  const refuse = (found: FoundProblem[]) => new ConfigError(source, placeProblems(found, located), located?.name);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw refuse([{ path: [], message: 'must be a mapping of options' }]);
  const missing: MissingVariable[] = [];
  let input = interpolateEnv(raw, env, missing) as ConfigInput;
  input = withDevelopmentDefaults(applyEnvironment(input, env));
  const result = configSchema.safeParse(input);
  const found: FoundProblem[] = [
    // The file's own recoverable problems (a key written twice).
    ...(located?.problems ?? []).filter((problem) => problem.severity === 'error'),
    ...missing.map(({ path: at, variable }) => ({ path: at, message: `environment variable ${variable} is not set`, reference: variable })),
    ...(result.success ? [] : schemaProblems(result.error.issues, configSchema, input)).filter(
      (problem) => !missing.some((variable) => within(problem.path, variable.path)),
    ),
  ].map((problem) => {
    const variable = problem.path && environmentOverrides(env).find((override) => within(problem.path, override.path));
    return variable ? { ...problem, env: variable.variable } : problem;
  });
  if (found.length > 0 || !result.success) throw refuse(found);
  const config = result.data;
  config.dataDir = path.resolve(cwd, config.dataDir);
  // SQLite's ":memory:" names an in-memory database (tests), not a file.
  if (config.database.path && config.database.path !== ':memory:') config.database.path = path.resolve(config.dataDir, config.database.path);
  addDevelopmentProviders(config);
  return config;
}

/** Whether `inner` is `outer` or a key below it. */
function within(inner: ConfigPath | undefined, outer: ConfigPath): boolean {
  return inner !== undefined && outer.length <= inner.length && outer.every((segment, index) => inner[index] === segment);
}

/** The settings the environment overrides (applyEnvironment): a problem there is the variable's, not the file's. */
function environmentOverrides(env: NodeJS.ProcessEnv): Array<{ path: ConfigPath; variable: string }> {
  return [
    { path: ['dataDir'], variable: 'GATEHOUSE_DATA_DIR' },
    { path: ['database', 'url'], variable: 'GATEHOUSE_DATABASE_URL' },
    { path: ['mode'], variable: 'GATEHOUSE_MODE' },
  ].filter(({ variable }) => env[variable]);
}

/** The few settings that are commonly set per deployment from the environment. */
function applyEnvironment(input: ConfigInput, env: NodeJS.ProcessEnv): ConfigInput {
  const next = { ...input };
  if (env.GATEHOUSE_DATA_DIR) next.dataDir = env.GATEHOUSE_DATA_DIR;
  // The PostgreSQL URL replaces the file's choice of database (a SQLite path or driver included).
  if (env.GATEHOUSE_DATABASE_URL) {
    const { path: _path, driver: _driver, ...database } = input.database ?? {};
    next.database = { ...database, url: env.GATEHOUSE_DATABASE_URL };
  }
  if (env.GATEHOUSE_MODE === 'production' || env.GATEHOUSE_MODE === 'development') next.mode = env.GATEHOUSE_MODE;
  else if (env.GATEHOUSE_MODE) next.mode = env.GATEHOUSE_MODE as never; // let the schema name the bad value
  return next;
}

/** The development IdPs are providers like any other; they are registered for the operator. */
function addDevelopmentProviders(config: Config): void {
  const added = config.development.idps
    .filter((idp) => !config.providers.some((provider) => provider.id === idp.providerId))
    .map((idp) => ({
      id: idp.providerId,
      name: idp.name,
      kind: 'oidc' as const,
      issuer: `http://localhost:${idp.port}`,
      clientId: DEV_IDP_CLIENT_ID,
      clientSecret: DEV_IDP_CLIENT_SECRET,
      clientAuthMethod: 'client_secret_basic' as const,
      scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
      claims: { email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture', groups: 'groups' },
      allowedDomains: [],
      createUsers: true,
      trustEmail: false,
      assumeEmailVerified: false,
      // Fail closed like any provider: groups count only where the config says so (see defaults.ts).
      trustGroups: idp.trustGroups,
      ...(idp.groupPrefix ? { groupPrefix: idp.groupPrefix } : {}),
      // Front-channel parameters on purpose: with the development IdPs people are meant to see the
      // protocol at work (PKCE challenge, state, nonce in the address bar). Real providers use PAR
      // whenever they offer it.
      pushedAuthorizationRequests: 'never' as const,
      authorizationParams: {},
      enabled: true,
    }));
  config.providers.unshift(...added);
}
