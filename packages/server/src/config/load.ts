import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { formatIssues } from '@gatehouse/contract';
import { parseDocument } from 'yaml';
import { builtInDefaults, DEV_IDP_CLIENT_ID, DEV_IDP_CLIENT_SECRET } from './defaults.js';
import { withDevelopmentDefaults } from './extendDefaults.js';
import { interpolateEnv, InterpolationError } from './interpolate.js';
import { configSchema, type Config, type ConfigInput } from './schema.js';

export const DEFAULT_CONFIG_FILE = 'gatehouse.yaml';

/** A configuration that cannot be used, with one line per bad key ("providers[0].issuer: ..."). */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`Invalid configuration (${source}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

export interface LoadedConfig {
  config: Config;
  /** The file it came from, or undefined for the built-in defaults. */
  file: string | undefined;
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
  if (file) {
    if (!existsSync(file)) throw new ConfigError(file, [`file not found`]);
    const document = parseDocument(readFileSync(file, 'utf8'), { prettyErrors: true, uniqueKeys: true });
    if (document.errors.length > 0) {
      throw new ConfigError(file, document.errors.map((error) => error.message.split('\n')[0] ?? error.message));
    }
    raw = document.toJS() ?? {};
  }
  return { config: parseConfig(raw, { env, cwd, source: file ?? 'built-in defaults' }), file };
}

/** Validates an already-parsed document: interpolation, environment overrides, schema, derived values. */
export function parseConfig(
  raw: unknown,
  { env = process.env, cwd = process.cwd(), source = 'configuration' }: { env?: NodeJS.ProcessEnv; cwd?: string; source?: string } = {},
): Config {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(source, ['(root): must be a mapping of options']);
  }
  let input: ConfigInput;
  try {
    input = interpolateEnv(raw, env) as ConfigInput;
  } catch (error) {
    if (error instanceof InterpolationError) throw new ConfigError(source, [error.message]);
    throw error;
  }
  input = withDevelopmentDefaults(applyEnvironment(input, env));
  const result = configSchema.safeParse(input);
  if (!result.success) throw new ConfigError(source, formatIssues(result.error.issues));
  const config = result.data;
  config.dataDir = path.resolve(cwd, config.dataDir);
  // SQLite's ":memory:" names an in-memory database (tests), not a file.
  if (config.database.path && config.database.path !== ':memory:') config.database.path = path.resolve(config.dataDir, config.database.path);
  addDevelopmentProviders(config);
  return config;
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
