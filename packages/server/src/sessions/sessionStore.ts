import type { CompiledQuery, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { Db } from '../storage/database.js';
import { fixedQuery, type Value } from '../storage/fixedQuery.js';
import { inCodePointOrder } from '../storage/dialect.js';
import type { Database, Identity, IdentitiesTable, SessionsTable, User, UsersTable } from '../storage/schema.js';
import { storableText } from '../storage/text.js';
import type { SessionRow } from '../storage/schema.js';
import { hashSecret, isWellFormedSecret, newPublicId, newSecret } from './sessionToken.js';
import type { TokenCipher } from './tokenCipher.js';

export interface SessionTimeouts {
  idleTimeout: number;
  absoluteLifetime: number;
  touchInterval: number;
}

export interface NewSession {
  userId: string;
  identityId: string;
  providerId: string;
  idpSid?: string | undefined;
  idToken?: string | undefined;
  refreshToken?: string | undefined;
  /** Kept only when some app needs it passed upstream. */
  accessToken?: { value: string; expiresAt: number | undefined } | undefined;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export type RevokeReason =
  | 'sign-out'
  | 'sign-out-everywhere'
  | 'rotated'
  | 'revoked-by-user'
  | 'revoked-by-admin'
  | 'backchannel-logout'
  | 'suspended'
  | 'refresh-failed'
  | 'identity-unlinked'
  | 'provider-disabled'
  /** The operator narrowed who may sign in (console, reload, start) and the session no longer passes. */
  | 'admission-changed'
  /** A claims re-check: what the IdP says now no longer passes the rules of who may sign in. */
  | 'claims-refused'
  /** The IdP could not confirm the session's claims for longer than session.maxClaimsAge. */
  | 'claims-unconfirmed';

export type Session = SessionRow;

/** How findWithPerson finds a session: its id, its cookie's hash, or an app-host token's hash and the origin it was issued for. */
export type PersonKey = { id: string } | { secretHash: string } | { appTokenHash: string; appOrigin: string };

export interface SessionWithPerson {
  session: Session;
  user: User;
  identity: Identity;
}

/** A live session as the admission rules read it (`liveForAdmission`). */
export interface LiveAdmission {
  sessionId: string;
  userId: string;
  providerId: string;
  identityId: string;
  email: string | null;
  emailVerified: number;
  /** The identity's kept claims (JSON; accounts/accountStore.ts `identityClaims`). */
  claims: string;
  userStatus: 'active' | 'suspended';
  primaryIdentityId: string | null;
}
/** Sessions per activity statement: well under SQLite's and PostgreSQL's limits on parameters. */
const ACTIVITY_BATCH = 512;

type RevokeQuery = UpdateQueryBuilder<Database, 'sessions', 'sessions', UpdateResult>;

/** Server-side sessions: the cookie holds a secret, the database its hash and everything else. */
export class SessionStore {
  private readonly revokeListeners: Array<(sessions: readonly Session[]) => unknown> = [];
  /** Sessions touched since the last activity batch, with when (touch). */
  private pendingActivity = new Map<string, number>();
  private activityTimer: NodeJS.Timeout | undefined;
  private activityStopped = false;
  /** Told when a batch of activity could not be written (it is kept for the next). */
  onActivityError: ((error: unknown) => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly cipher: TokenCipher,
    /** The timeouts, or where to read them at each use (a config reload may change them). */
    private readonly settings: SessionTimeouts | (() => SessionTimeouts),
    private readonly now: () => number = Date.now,
    /** How long activity waits to be written with others (touch); 0 writes each at once. */
    private readonly activityFlushMs = 0,
  ) {}

  private get timeouts(): SessionTimeouts {
    return typeof this.settings === 'function' ? this.settings() : this.settings;
  }

  /** Creates a session and returns the cookie secret, which is never stored. */
  async create(input: NewSession): Promise<{ secret: string; session: Session }> {
    const now = this.now();
    const id = newPublicId();
    const secret = newSecret();
    const session: Session = {
      id,
      secret_hash: hashSecret(secret),
      user_id: input.userId,
      identity_id: input.identityId,
      provider_id: input.providerId,
      idp_sid: input.idpSid ?? null,
      id_token_enc: input.idToken ? this.cipher.encrypt(input.idToken, tokenContext(id, 'id_token')) : null,
      refresh_token_enc: input.refreshToken ? this.cipher.encrypt(input.refreshToken, tokenContext(id, 'refresh_token')) : null,
      created_at: now,
      last_seen_at: now,
      idle_expires_at: Math.min(now + this.timeouts.idleTimeout, now + this.timeouts.absoluteLifetime),
      absolute_expires_at: now + this.timeouts.absoluteLifetime,
      ip: input.ip?.slice(0, 64) ?? null,
      user_agent: storableText(input.userAgent, 512),
      revoked_at: null,
      revoked_reason: null,
      claims_checked_at: now,
      claims_verified_at: now,
      access_token_enc: input.accessToken ? this.cipher.encrypt(input.accessToken.value, tokenContext(id, 'access_token')) : null,
      access_token_expires_at: input.accessToken?.expiresAt ?? null,
    };
    await this.db.insertInto('sessions').values(session).execute();
    return { secret, session };
  }

  /** The active session for a cookie value, or undefined when unknown, revoked or expired. */
  async findActive(secret: string | undefined): Promise<Session | undefined> {
    if (!isWellFormedSecret(secret)) return undefined;
    const row = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('secret_hash', '=', hashSecret(secret))
      .executeTakeFirst();
    if (!row || !isActive(row, this.now())) return undefined;
    return row;
  }

  /** Why the session of this cookie value ended, when it did (the cookie outlives its session). */
  async endedReason(secret: string | undefined): Promise<{ reason: string | null; providerId: string } | undefined> {
    if (!isWellFormedSecret(secret)) return undefined;
    const row = await this.db
      .selectFrom('sessions')
      .select(['revoked_reason', 'provider_id'])
      .where('secret_hash', '=', hashSecret(secret))
      .where('revoked_at', 'is not', null)
      .executeTakeFirst();
    return row ? { reason: row.revoked_reason, providerId: row.provider_id } : undefined;
  }

  async findById(id: string): Promise<Session | undefined> {
    return this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * A session with its user and identity, in one statement: what every check of a session reads (the
   * resolver's cache miss, the OpenID Provider's token requests), where a read of each, one after
   * another, costs three or four round trips on PostgreSQL and as many statements on SQLite. Found by
   * its id, by its cookie's hash, or by an app-host token's hash for that very origin. Undefined when
   * any of them is missing; whether the session is still active is the caller's to judge (isActive).
   */
  async findWithPerson(by: PersonKey): Promise<SessionWithPerson | undefined> {
    const query = 'id' in by ? this.personById(by) : 'secretHash' in by ? this.personBySecretHash(by) : this.personByAppToken(by);
    const row = (await this.db.executeQuery(query as CompiledQuery<PersonRow>)).rows[0];
    if (!row) return undefined;
    return { session: sessionOf(row), user: userOf(row), identity: identityOf(row) };
  }

  // The statements of findWithPerson, one per kind of key, compiled once (storage/fixedQuery.ts): Kysely
  // builds and compiles a query of forty aliased columns in tens of µs, more than SQLite takes to run it.
  private readonly personById = fixedQuery((value: Value<{ id: string }>) => this.personSelect().where('s.id', '=', value('id')));
  private readonly personBySecretHash = fixedQuery((value: Value<{ secretHash: string }>) => this.personSelect().where('s.secret_hash', '=', value('secretHash')));
  private readonly personByAppToken = fixedQuery((value: Value<{ appTokenHash: string; appOrigin: string }>) =>
    this.personSelect().innerJoin('app_sessions as a', 'a.session_id', 's.id').where('a.token_hash', '=', value('appTokenHash')).where('a.app_origin', '=', value('appOrigin')),
  );

  /** The session with its user and identity, every column aliased by its table (PersonRow). */
  private personSelect() {
    const columns = [...SESSION_ALIASES.map(([c, alias]) => `s.${c} as ${alias}` as const), ...USER_ALIASES.map(([c, alias]) => `u.${c} as ${alias}` as const), ...IDENTITY_ALIASES.map(([c, alias]) => `i.${c} as ${alias}` as const)] as Array<`${'s' | 'u' | 'i'}.${string} as ${string}`>;
    return this.db
      .selectFrom('sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .innerJoin('identities as i', 'i.id', 's.identity_id')
      .select(columns as never);
  }

  /** Whether `touch` would write (activity is recorded at most once per touchInterval). */
  isTouchDue(session: Session, now = this.now()): boolean {
    return now - session.last_seen_at >= this.timeouts.touchInterval;
  }

  /** How many sessions are live now (not revoked, not expired): the dashboard. */
  async countLive(now = this.now()): Promise<number> {
    const row = await this.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('revoked_at', 'is', null)
      .where('idle_expires_at', '>', now)
      .where('absolute_expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Records activity on a session: its last use, and its idle expiry moved on (never past its absolute
   * one), at most once per touch interval (a write per request would make every page view a database
   * write). The session is answered with the new values at once; the
   * write waits for the next batch (activityFlushMs), one statement for every session touched since
   * the last: on SQLite every write is a commit (20-45 µs here, and the write-ahead log grows by a page
   * per session), on PostgreSQL a round trip and a commit. The stored values lag by at
   * most the batch interval, which the touch interval already dwarfs; a crash loses at most one
   * batch of activity (sessions then idle out a little earlier: never later).
   */
  async touch(session: Session): Promise<Session> {
    const now = this.now();
    if (!this.isTouchDue(session)) return session;
    const idleExpiresAt = Math.min(now + this.timeouts.idleTimeout, session.absolute_expires_at);
    if (this.activityFlushMs <= 0 || this.activityStopped) await this.writeActivity([session.id], now);
    else {
      this.pendingActivity.set(session.id, Math.max(now, this.pendingActivity.get(session.id) ?? 0));
      this.activityTimer ??= setTimeout(() => void this.flushActivity(), this.activityFlushMs).unref();
    }
    return { ...session, last_seen_at: now, idle_expires_at: idleExpiresAt };
  }

  /** Writes the activity recorded since the last batch (also as the process stops). */
  async flushActivity(): Promise<void> {
    if (this.activityTimer) clearTimeout(this.activityTimer);
    this.activityTimer = undefined;
    if (this.pendingActivity.size === 0) return;
    const batch = this.pendingActivity;
    this.pendingActivity = new Map();
    // One time for the batch, the latest: a session touched earlier in it is seen at most one batch
    // interval later than it was (its idle expiry moves on by as much).
    let now = 0;
    for (const at of batch.values()) if (at > now) now = at;
    const ids = [...batch.keys()];
    try {
      for (let start = 0; start < ids.length; start += ACTIVITY_BATCH) await this.writeActivity(ids.slice(start, start + ACTIVITY_BATCH), now);
    } catch (error) {
      // Kept for the next batch (the database may be back by then), unless newer activity replaced it.
      for (const [id, at] of batch) if (!this.pendingActivity.has(id)) this.pendingActivity.set(id, at);
      if (!this.activityStopped) this.activityTimer ??= setTimeout(() => void this.flushActivity(), this.activityFlushMs).unref();
      this.onActivityError?.(error);
    }
  }

  /** Writes what activity is pending and writes any later at once: the process is stopping. */
  async stopActivity(): Promise<void> {
    this.activityStopped = true;
    await this.flushActivity();
  }

  private async writeActivity(ids: readonly string[], now: number): Promise<void> {
    // The list is padded to a power of two with its last id (harmless twice in IN), so that a few
    // statement texts serve every batch size (storage/statementCache.ts keeps them prepared).
    const padded = [...ids];
    while (padded.length & (padded.length - 1)) padded.push(ids[ids.length - 1]!);
    const idleUntil = now + this.timeouts.idleTimeout;
    await this.db
      .updateTable('sessions')
      .set((eb) => ({
        last_seen_at: now,
        idle_expires_at: eb.case().when('absolute_expires_at', '<', idleUntil).then(eb.ref('absolute_expires_at')).else(idleUntil).end(),
      }))
      .where('id', 'in', padded)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async revoke(id: string, reason: RevokeReason): Promise<boolean> {
    return (await this.revokeWhere(reason, (query) => query.where('id', '=', id))).length > 0;
  }

  /** The user's sessions that are still active, most recently used first (then by id: one order on both databases). */
  listActiveForUser(userId: string): Promise<Session[]> {
    const now = this.now();
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('idle_expires_at', '>', now)
      .where('absolute_expires_at', '>', now)
      .orderBy('last_seen_at', 'desc')
      .orderBy(inCodePointOrder(this.db, 'id'))
      .execute();
  }

  /** Revokes these sessions (those still live), returning the ones revoked. */
  revokeMany(ids: readonly string[], reason: RevokeReason): Promise<Session[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.revokeWhere(reason, (query) => query.where('id', 'in', [...ids]));
  }

  /**
   * A page of live sessions, in id order after `after`, with what the admission rules read of each: its
   * identity's email and kept claims, its user's status and primary identity (sessions/admissionReview.ts).
   * Only the sessions of `providerIds` when given.
   */
  async liveForAdmission({ providerIds, after, limit }: { providerIds?: readonly string[] | undefined; after?: string | undefined; limit: number }): Promise<LiveAdmission[]> {
    if (providerIds?.length === 0) return [];
    const now = this.now();
    let query = this.db
      .selectFrom('sessions')
      .innerJoin('identities', 'identities.id', 'sessions.identity_id')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select([
        'sessions.id as sessionId',
        'sessions.user_id as userId',
        'sessions.provider_id as providerId',
        'sessions.identity_id as identityId',
        'identities.email as email',
        'identities.email_verified as emailVerified',
        'identities.claims as claims',
        'users.status as userStatus',
        'users.primary_identity_id as primaryIdentityId',
      ])
      .where('sessions.revoked_at', 'is', null)
      .where('sessions.idle_expires_at', '>', now)
      .where('sessions.absolute_expires_at', '>', now);
    if (providerIds) query = query.where('sessions.provider_id', 'in', [...providerIds]);
    if (after !== undefined) query = query.where('sessions.id', '>', after);
    return query.orderBy('sessions.id').limit(limit).execute();
  }

  /** Revokes one of the user's own sessions; false if there is no such active session of theirs. */
  async revokeForUser(userId: string, id: string, reason: RevokeReason): Promise<boolean> {
    return (await this.revokeWhere(reason, (query) => query.where('id', '=', id).where('user_id', '=', userId))).length > 0;
  }

  /** Revokes every session of the user (but `exceptId`), returning the ids revoked. */
  revokeAllForUser(userId: string, reason: RevokeReason, exceptId?: string): Promise<Session[]> {
    return this.revokeWhere(reason, (query) => {
      const mine = query.where('user_id', '=', userId);
      return exceptId ? mine.where('id', '!=', exceptId) : mine;
    });
  }

  revokeForIdentity(identityId: string, reason: RevokeReason): Promise<Session[]> {
    return this.revokeWhere(reason, (query) => query.where('identity_id', '=', identityId));
  }

  /** Every session signed in through a provider (an admin turned it off). */
  revokeForProvider(providerId: string, reason: RevokeReason): Promise<Session[]> {
    return this.revokeWhere(reason, (query) => query.where('provider_id', '=', providerId));
  }

  /**
   * Back-channel logout (OIDC Back-Channel Logout 1.0 §2.7): the sessions of this provider with that
   * IdP session id and/or subject. Always scoped to the provider: two IdPs may use the same `sub`.
   */
  revokeByIdpSession(providerId: string, { sid, sub }: { sid?: string | undefined; sub?: string | undefined }): Promise<Session[]> {
    if (!sid && !sub) return Promise.resolve([]);
    return this.revokeWhere('backchannel-logout', (query) => {
      let scoped = query.where('provider_id', '=', providerId);
      if (sid) scoped = scoped.where('idp_sid', '=', sid);
      if (sub) {
        scoped = scoped.where('identity_id', 'in', (eb) =>
          eb.selectFrom('identities').select('id').where('provider_id', '=', providerId).where('subject', '=', sub),
        );
      }
      return scoped;
    });
  }

  /**
   * Claims the right to re-check this session's claims now (compare-and-set on claims_checked_at), so
   * that of several requests or nodes noticing stale claims at once, exactly one refreshes.
   */
  async beginClaimsCheck(session: Session, nextCheckAt: number): Promise<boolean> {
    const result = await this.db
      .updateTable('sessions')
      .set({ claims_checked_at: nextCheckAt })
      .where('id', '=', session.id)
      .where('claims_checked_at', '=', session.claims_checked_at)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Stores what a refresh returned (rotated refresh token, new ID token); absent values are kept. */
  async storeRefreshedTokens(
    session: Session,
    tokens: { idToken?: string | undefined; refreshToken?: string | undefined; accessToken?: NewSession['accessToken']; checkedAt: number },
  ): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({
        claims_checked_at: tokens.checkedAt,
        claims_verified_at: tokens.checkedAt,
        ...(tokens.idToken ? { id_token_enc: this.cipher.encrypt(tokens.idToken, tokenContext(session.id, 'id_token')) } : {}),
        ...(tokens.refreshToken ? { refresh_token_enc: this.cipher.encrypt(tokens.refreshToken, tokenContext(session.id, 'refresh_token')) } : {}),
        ...(tokens.accessToken
          ? {
              access_token_enc: this.cipher.encrypt(tokens.accessToken.value, tokenContext(session.id, 'access_token')),
              access_token_expires_at: tokens.accessToken.expiresAt ?? null,
            }
          : {}),
      })
      .where('id', '=', session.id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /**
   * Called with every batch of revoked sessions (caches, open WebSockets). A revocation returns once
   * every listener has settled: one that announces it to the other workers waits for them
   * (events/clusterChanges.ts), so that whoever revoked is answered only when no worker still lets
   * the session in.
   */
  onRevoke(listener: (sessions: readonly Session[]) => unknown): void {
    this.revokeListeners.push(listener);
  }

  private async revokeWhere(
    reason: RevokeReason,
    filter: (query: RevokeQuery) => RevokeQuery,
  ): Promise<Session[]> {
    // A revoked session keeps its row (the account center and audit show it) but loses its tokens.
    const revoked = await filter(
      this.db
        .updateTable('sessions')
        .set({ revoked_at: this.now(), revoked_reason: reason, refresh_token_enc: null, id_token_enc: null, access_token_enc: null })
        .where('revoked_at', 'is', null),
    )
      .returningAll()
      .execute();
    if (revoked.length > 0) await Promise.all(this.revokeListeners.map((listener) => listener(revoked)));
    return revoked;
  }

  idToken(session: Session): string | undefined {
    return session.id_token_enc ? this.cipher.decrypt(session.id_token_enc, tokenContext(session.id, 'id_token')) : undefined;
  }

  refreshToken(session: Session): string | undefined {
    return session.refresh_token_enc
      ? this.cipher.decrypt(session.refresh_token_enc, tokenContext(session.id, 'refresh_token'))
      : undefined;
  }

  /** The IdP access token while it is still valid (for apps with passAccessToken). */
  accessToken(session: Session): string | undefined {
    if (!session.access_token_enc || (session.access_token_expires_at !== null && session.access_token_expires_at <= this.now())) return undefined;
    return this.cipher.decrypt(session.access_token_enc, tokenContext(session.id, 'access_token'));
  }

  /** When the IdP last confirmed the session's claims. */
  static claimsVerifiedAt(session: Session): number {
    return session.claims_verified_at ?? session.claims_checked_at;
  }

  /** When the session ends by itself: the earlier of the idle and absolute expiries. */
  static expiresAt(session: Session): number {
    return Math.min(session.idle_expires_at, session.absolute_expires_at);
  }
}

export function isActive(session: Session, now: number): boolean {
  return session.revoked_at === null && now < session.idle_expires_at && now < session.absolute_expires_at;
}

function tokenContext(sessionId: string, purpose: 'id_token' | 'refresh_token' | 'access_token'): string {
  return `gatehouse/session/${sessionId}/${purpose}`;
}

/** Every column of each table, for reads that join them (findWithPerson); the types below fail the build when one is left out. */
const SESSION_COLUMNS = [
  'id', 'secret_hash', 'user_id', 'identity_id', 'provider_id', 'idp_sid', 'id_token_enc', 'refresh_token_enc', 'created_at', 'last_seen_at',
  'idle_expires_at', 'absolute_expires_at', 'ip', 'user_agent', 'revoked_at', 'revoked_reason', 'claims_checked_at', 'claims_verified_at',
  'access_token_enc', 'access_token_expires_at',
] as const satisfies ReadonlyArray<keyof SessionsTable>;
const USER_COLUMNS = ['id', 'email', 'name', 'picture', 'status', 'roles', 'primary_identity_id', 'created_at', 'updated_at', 'last_sign_in_at'] as const satisfies ReadonlyArray<keyof UsersTable>;
const IDENTITY_COLUMNS = ['id', 'user_id', 'provider_id', 'subject', 'email', 'email_verified', 'claims', 'linked_at', 'last_used_at'] as const satisfies ReadonlyArray<keyof IdentitiesTable>;
const aliases = (prefix: string, columns: readonly string[]): ReadonlyArray<readonly [string, string]> => columns.map((c) => [c, `${prefix}_${c}`] as const);
const SESSION_ALIASES = aliases('s', SESSION_COLUMNS);
const USER_ALIASES = aliases('u', USER_COLUMNS);
const IDENTITY_ALIASES = aliases('i', IDENTITY_COLUMNS);

/** A row of findWithPerson: each table's columns under its alias prefix. */
type Aliased<Row, Prefix extends string> = { [Column in keyof Row & string as `${Prefix}_${Column}`]: Row[Column] };
type PersonRow = Aliased<Session, 's'> & Aliased<User, 'u'> & Aliased<Identity, 'i'>;

// Each table's columns out of a joined row, as object literals (the return types make them exhaustive).
// A literal gets one fixed shape from V8; an object built a property at a time, as a loop over the
// column names did, turns into a hash table past a dozen properties: every read of it slower, and a
// cached session ~640 bytes larger (docs/operations/sizing.md).
function sessionOf(r: PersonRow): Session {
  return {
    id: r.s_id,
    secret_hash: r.s_secret_hash,
    user_id: r.s_user_id,
    identity_id: r.s_identity_id,
    provider_id: r.s_provider_id,
    idp_sid: r.s_idp_sid,
    id_token_enc: r.s_id_token_enc,
    refresh_token_enc: r.s_refresh_token_enc,
    created_at: r.s_created_at,
    last_seen_at: r.s_last_seen_at,
    idle_expires_at: r.s_idle_expires_at,
    absolute_expires_at: r.s_absolute_expires_at,
    ip: r.s_ip,
    user_agent: r.s_user_agent,
    revoked_at: r.s_revoked_at,
    revoked_reason: r.s_revoked_reason,
    claims_checked_at: r.s_claims_checked_at,
    claims_verified_at: r.s_claims_verified_at,
    access_token_enc: r.s_access_token_enc,
    access_token_expires_at: r.s_access_token_expires_at,
  };
}

function userOf(r: PersonRow): User {
  return {
    id: r.u_id,
    email: r.u_email,
    name: r.u_name,
    picture: r.u_picture,
    status: r.u_status,
    roles: r.u_roles,
    primary_identity_id: r.u_primary_identity_id,
    created_at: r.u_created_at,
    updated_at: r.u_updated_at,
    last_sign_in_at: r.u_last_sign_in_at,
  };
}

function identityOf(r: PersonRow): Identity {
  return {
    id: r.i_id,
    user_id: r.i_user_id,
    provider_id: r.i_provider_id,
    subject: r.i_subject,
    email: r.i_email,
    email_verified: r.i_email_verified,
    claims: r.i_claims,
    linked_at: r.i_linked_at,
    last_used_at: r.i_last_used_at,
  };
}

type Exhaustive<Table, Listed> = [Exclude<keyof Table, Listed>] extends [never] ? true : { missing: Exclude<keyof Table, Listed> };
const exhaustive: [Exhaustive<SessionsTable, (typeof SESSION_COLUMNS)[number]>, Exhaustive<UsersTable, (typeof USER_COLUMNS)[number]>, Exhaustive<IdentitiesTable, (typeof IDENTITY_COLUMNS)[number]>] = [true, true, true];
void exhaustive;
