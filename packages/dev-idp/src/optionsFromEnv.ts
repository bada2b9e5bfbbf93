import { readFileSync } from 'node:fs';

import { builtInUserSets } from './defaultUsers.js';
import { parseUsers } from './parseUsers.js';
import type { DevIdpOptions } from './startDevIdp.js';

// Gatehouse's built-in defaults: portal on localhost:4180, its dev provider id `dev`, this IdP on 4181.
const DEFAULT_PORT = 4181;
const DEFAULT_CLIENT_ID = 'gatehouse';
const DEFAULT_CLIENT_SECRET = 'gatehouse-dev-secret';
const DEFAULT_REDIRECT_URI = 'http://localhost:4180/.gatehouse/callback/dev';
const DEFAULT_POST_LOGOUT_REDIRECT_URI = 'http://localhost:4180/signed-out';

type Env = Record<string, string | undefined>;

function list(value: string | undefined, fallback: string): string[] {
  return (value ?? fallback)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function port(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new Error(`dev-idp: DEV_IDP_PORT must be a port number, got ${value}`);
  return parsed;
}

function userSet(name: string | undefined) {
  if (name === undefined) return undefined;
  const users = builtInUserSets[name];
  if (!users) throw new Error(`dev-idp: DEV_IDP_USER_SET must be one of ${Object.keys(builtInUserSets).join(', ')}, got ${name}`);
  return users;
}

function readJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`dev-idp: ${source} is not valid JSON: ${(error as Error).message}`);
  }
}

function readUsersFile(path: string) {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`dev-idp: cannot read DEV_IDP_USERS file: ${(error as Error).message}`);
  }
  return parseUsers(readJson(text, path), path);
}

/**
 * Options for the CLI, from DEV_IDP_* environment variables. DEV_IDP_CONFIG, a JSON object of
 * {@link DevIdpOptions}, overrides any option it names (handy for tests).
 */
export function optionsFromEnv(rawEnv: Env): DevIdpOptions {
  // An empty variable (common in compose files and CI) means "not set".
  const env = Object.fromEntries(Object.entries(rawEnv).filter(([, value]) => value !== '')) as Env;
  const backchannelLogoutUri = env.DEV_IDP_BACKCHANNEL_LOGOUT_URI;
  const options: DevIdpOptions = {
    port: port(env.DEV_IDP_PORT),
    host: env.DEV_IDP_HOST,
    issuer: env.DEV_IDP_ISSUER,
    name: env.DEV_IDP_NAME,
    cookiePrefix: env.DEV_IDP_COOKIE_PREFIX,
    dataDir: env.DEV_IDP_DATA_DIR,
    controlToken: env.DEV_IDP_CONTROL_TOKEN,
    users: env.DEV_IDP_USERS ? readUsersFile(env.DEV_IDP_USERS) : userSet(env.DEV_IDP_USER_SET),
    clients: [
      {
        clientId: env.DEV_IDP_CLIENT_ID ?? DEFAULT_CLIENT_ID,
        clientName: env.DEV_IDP_CLIENT_NAME ?? 'Gatehouse',
        clientSecret: env.DEV_IDP_CLIENT_SECRET ?? DEFAULT_CLIENT_SECRET,
        redirectUris: list(env.DEV_IDP_REDIRECT_URIS, DEFAULT_REDIRECT_URI),
        postLogoutRedirectUris: list(env.DEV_IDP_POST_LOGOUT_REDIRECT_URIS, DEFAULT_POST_LOGOUT_REDIRECT_URI),
        ...(backchannelLogoutUri ? { backchannelLogoutUri } : {}),
      },
    ],
  };
  if (env.DEV_IDP_CONFIG === undefined) return options;

  const config = readJson(env.DEV_IDP_CONFIG, 'DEV_IDP_CONFIG');
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new Error('dev-idp: DEV_IDP_CONFIG must be a JSON object');
  }
  const overrides = config as Partial<DevIdpOptions> & { users?: unknown };
  return {
    ...options,
    ...overrides,
    ...(overrides.users === undefined ? {} : { users: parseUsers(overrides.users, 'DEV_IDP_CONFIG') }),
  };
}
