import { createHash, timingSafeEqual } from 'node:crypto';

import type { DevIdpUser } from './defaultUsers.js';

function normalizeLogin(login: string): string {
  return login.trim().toLowerCase();
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Compared against when the login is unknown, so a wrong login costs the same as a wrong password. */
const NO_PASSWORD = digest('');

/**
 * The dev IdP's accounts. Holds its own copies of the users so that {@link setGroups} never mutates the
 * caller's objects (such as the frozen `defaultUsers`).
 */
export class UserDirectory {
  readonly #byLogin = new Map<string, DevIdpUser>();
  readonly #bySubject = new Map<string, DevIdpUser>();

  constructor(users: readonly DevIdpUser[]) {
    for (const user of users) {
      const login = normalizeLogin(user.login);
      if (this.#byLogin.has(login)) throw new Error(`dev-idp: duplicate user login ${user.login}`);
      if (this.#bySubject.has(user.sub)) throw new Error(`dev-idp: duplicate user sub ${user.sub}`);
      const copy = { ...user, groups: [...user.groups] };
      this.#byLogin.set(login, copy);
      this.#bySubject.set(user.sub, copy);
    }
  }

  findBySubject(sub: string): DevIdpUser | undefined {
    return this.#bySubject.get(sub);
  }

  /** The user if login and password match, compared in constant time. */
  authenticate(login: string, password: string): DevIdpUser | undefined {
    const user = this.#byLogin.get(normalizeLogin(login));
    const matches = timingSafeEqual(user ? digest(user.password) : NO_PASSWORD, digest(password));
    return user && matches ? user : undefined;
  }

  /** Replaces a user's groups; every later ID token, userinfo and refresh answer carries them. */
  setGroups(login: string, groups: readonly string[]): void {
    const user = this.#byLogin.get(normalizeLogin(login));
    if (!user) throw new Error(`dev-idp: no user with login ${login}`);
    user.groups = [...groups];
  }

  /**
   * Changes what a user's profile says of their email, as the self-service profile page of Keycloak,
   * Okta or Auth0 lets a person do: a new address, verified or not. Every later ID token, userinfo and
   * refresh answer carries it; the login stays the same.
   */
  setEmail(login: string, email: string, emailVerified: boolean): void {
    const user = this.#byLogin.get(normalizeLogin(login));
    if (!user) throw new Error(`dev-idp: no user with login ${login}`);
    user.email = email;
    user.emailVerified = emailVerified;
  }

  has(login: string): boolean {
    return this.#byLogin.has(normalizeLogin(login));
  }
}
