import { subjectFor, type DevIdpUser } from './defaultUsers.js';

function fail(source: string, message: string): never {
  throw new Error(`dev-idp: ${source}: ${message}`);
}

/**
 * Reads users written by hand (DEV_IDP_USERS file, DEV_IDP_CONFIG). Only `login`, `password` and
 * `name` are required: `sub` defaults to {@link subjectFor}(login), `email` to the login,
 * `emailVerified` to true and `groups` to none.
 */
export function parseUsers(value: unknown, source: string): DevIdpUser[] {
  if (!Array.isArray(value)) fail(source, 'users must be a JSON array');
  return value.map((entry: unknown, index) => {
    const user = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const where = `user ${index}`;
    for (const field of ['login', 'password', 'name']) {
      if (typeof user[field] !== 'string' || user[field] === '') fail(source, `${where}: "${field}" must be a non-empty string`);
    }
    const login = user.login as string;
    const groups = user.groups ?? [];
    if (!Array.isArray(groups) || !groups.every((group) => typeof group === 'string')) {
      fail(source, `${where}: "groups" must be an array of strings`);
    }
    for (const field of ['sub', 'email']) {
      if (user[field] !== undefined && typeof user[field] !== 'string') fail(source, `${where}: "${field}" must be a string`);
    }
    if (user.emailVerified !== undefined && typeof user.emailVerified !== 'boolean') {
      fail(source, `${where}: "emailVerified" must be a boolean`);
    }
    return {
      sub: (user.sub as string | undefined) ?? subjectFor(login),
      login,
      password: user.password as string,
      name: user.name as string,
      email: (user.email as string | undefined) ?? login,
      emailVerified: (user.emailVerified as boolean | undefined) ?? true,
      groups,
    };
  });
}
