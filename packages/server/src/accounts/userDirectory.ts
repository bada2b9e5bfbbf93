import { sql } from 'kysely';
import { identityClaims } from './accountStore.js';
import { adminStatus } from './admins.js';
import { parseRoles } from './roles.js';
import { identityGroups, type GroupTrustLookup, type IdentityGroups } from './effectiveGroups.js';
import type { Config } from '../config/schema.js';
import { AppError } from '../errors.js';
import type { Db } from '../storage/database.js';
import { asciiLowered, foldAscii, inCodePointOrder, serializeOn } from '../storage/dialect.js';
import type { User } from '../storage/schema.js';

export interface UserSummary {
  id: string;
  email: string;
  name: string;
  status: 'active' | 'suspended';
  admin: boolean;
  adminFromConfig: boolean;
  createdAt: number;
  lastSignInAt: number | null;
  activeSessions: number;
}

/** The admin console's view of users: server-side search and paging that stays quick with thousands. */
export class UserDirectory {
  constructor(
    private readonly db: Db,
    /** The admins named in the config, or where to read them at each use (a config reload may change them). */
    private readonly namedAdmins: Config['admins'] | (() => Config['admins']),
    /** The providers as they are now: an admin by group is one only through that (enabled) provider. */
    private readonly providers: GroupTrustLookup,
    private readonly now: () => number = Date.now,
  ) {}

  private get admins(): Config['admins'] {
    return typeof this.namedAdmins === 'function' ? this.namedAdmins() : this.namedAdmins;
  }

  async search(
    { query, status }: { query?: string | undefined; status?: 'active' | 'suspended' | undefined },
    page: number,
    pageSize: number,
  ): Promise<{ users: UserSummary[]; total: number }> {
    let base = this.db.selectFrom('users');
    if (query) {
      // LIKE with the wildcards in the value escaped: a search for "50%" means the text "50%". Both sides
      // lower-cased in ASCII only, so that both databases (and every PostgreSQL locale) match the same
      // users: "ann" finds "Ann", while "élodie" and "Élodie" are two spellings (storage/dialect.ts).
      const pattern = `%${foldAscii(query).replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
      base = base.where((eb) =>
        eb.or([eb(asciiLowered(this.db, 'email'), 'like', sql<string>`${pattern} escape '\\'`), eb(asciiLowered(this.db, 'name'), 'like', sql<string>`${pattern} escape '\\'`)]),
      );
    }
    if (status) base = base.where('status', '=', status);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy(inCodePointOrder(this.db, 'email')).orderBy(inCodePointOrder(this.db, 'id')).limit(pageSize).offset((page - 1) * pageSize).execute(),
      base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { users: await this.summaries(rows), total: Number(count.n) };
  }

  /** The id of the user with this email (emails are stored canonical: compared as they are). */
  async idByEmail(email: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    return row?.id;
  }

  async get(id: string): Promise<UserSummary | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? (await this.summaries([row]))[0] : undefined;
  }

  /** Everyone who is an admin now (config or console), for the "last admin" rule. */
  async adminCount(): Promise<number> {
    const candidates = await this.db
      .selectFrom('users')
      .selectAll()
      .where('status', '=', 'active')
      .where((eb) =>
        eb.or([
          eb('roles', 'like', '%"admin"%'),
          ...(this.admins.emails.length > 0 ? [eb('email', 'in', this.admins.emails)] : []),
          ...(this.admins.groups.length > 0 ? [eb.exists(eb.selectFrom('identities').select('id').whereRef('identities.user_id', '=', 'users.id'))] : []),
        ]),
      )
      .execute();
    return (await this.summaries(candidates)).filter((user) => user.admin).length;
  }

  /**
   * Takes the console-granted admin role from a user, unless that would leave nobody an admin: the
   * check and the change are one transaction, serialised with every other one (an advisory lock on
   * PostgreSQL; SQLite's one connection runs one transaction at a time), so two admins removing each
   * other at once — on two nodes — leave one of them an admin. Throws AppError('last_admin') then.
   * Returns the roles before and after, or undefined when there is no such user. An admin from the
   * config stays one whatever the stored role says (the console refuses those before calling this).
   */
  async removeAdminRole(userId: string): Promise<{ before: string[]; after: string[] } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, ['admins']);
      const directory = new UserDirectory(trx, this.namedAdmins, this.providers, this.now);
      const user = await directory.get(userId);
      const row = await trx.selectFrom('users').select('roles').where('id', '=', userId).executeTakeFirst();
      if (!user || !row) return undefined;
      const before = parseRoles(row.roles);
      const after = before.filter((role) => role !== 'admin');
      await trx.updateTable('users').set({ roles: JSON.stringify(after), updated_at: this.now() }).where('id', '=', userId).execute();
      // Counted after the change, inside the transaction: whoever is still an admin once it is made.
      if (user.admin && (await directory.adminCount()) === 0) throw new AppError('last_admin');
      return { before, after };
    });
  }

  /**
   * Suspends a user, unless that would leave no active admin: like removeAdminRole, and under the same
   * lock, so a suspension and a removal of the admin role at once — on two nodes — cannot each count
   * the other's admin as the one that remains. Throws AppError('last_admin') then. Returns the user as
   * they were, or undefined when there is no such user. The caller ends their sessions.
   */
  async suspend(userId: string): Promise<UserSummary | undefined> {
    return this.db.transaction().execute(async (trx) => {
      await serializeOn(trx, ['admins']);
      const directory = new UserDirectory(trx, this.namedAdmins, this.providers, this.now);
      const user = await directory.get(userId);
      if (!user) return undefined;
      await trx.updateTable('users').set({ status: 'suspended', updated_at: this.now() }).where('id', '=', userId).execute();
      if (user.admin && user.status === 'active' && (await directory.adminCount()) === 0) throw new AppError('last_admin');
      return user;
    });
  }

  private async summaries(users: User[]): Promise<UserSummary[]> {
    if (users.length === 0) return [];
    const ids = users.map((user) => user.id);
    const now = this.now();
    const [identities, sessions] = await Promise.all([
      this.db.selectFrom('identities').select(['user_id', 'provider_id', 'claims']).where('user_id', 'in', ids).execute(),
      this.db
        .selectFrom('sessions')
        .select(['user_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('user_id', 'in', ids)
        .where('revoked_at', 'is', null)
        .where('idle_expires_at', '>', now)
        .where('absolute_expires_at', '>', now)
        .groupBy('user_id')
        .execute(),
    ]);
    // Each identity's groups with its own provider: config admin when signing in with one of them makes
    // the user an admin (never groups pooled across providers).
    const groupsOf = new Map<string, IdentityGroups[]>();
    for (const identity of identities) {
      groupsOf.set(identity.user_id, [...(groupsOf.get(identity.user_id) ?? []), identityGroups(this.providers, identity, identityClaims(identity))]);
    }
    const sessionsOf = new Map(sessions.map((row) => [row.user_id, Number(row.n)]));
    const admins = this.admins;
    return users.map((user) => {
      const status = adminStatus(admins, user, groupsOf.get(user.id) ?? []);
      return {
        id: user.id,
        email: user.email,
        name: user.name,
        status: user.status,
        admin: status.admin,
        adminFromConfig: status.fromConfig,
        createdAt: user.created_at,
        lastSignInAt: user.last_sign_in_at,
        activeSessions: sessionsOf.get(user.id) ?? 0,
      };
    });
  }
}
