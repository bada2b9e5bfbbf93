import { createHash } from 'node:crypto';
import type { Db } from '../storage/database.js';
import { inCodePointOrder, serializeOn } from '../storage/dialect.js';
import { fixedQuery, type Value } from '../storage/fixedQuery.js';
import type { OpGrantsTable, OpPayloadsTable } from '../storage/schema.js';

/**
 * The OpenID Provider's storage (migration 0013), the only code that reads or writes `op_payloads` and
 * `op_grants`:
 *
 * - payloads: what oidc-provider stores (provide/adapter.ts shapes them). Every id is kept only as its
 *   SHA-256: the id of a code or a token *is* its bearer secret, so a reader of the database (a backup,
 *   a replica, a leaked dump) must not be able to present it. User codes likewise. A row past its
 *   `expires_at` is never returned, purged yet or not. `consume` is a compare-and-set, so of two nodes
 *   redeeming one code or rotating one refresh token exactly one wins.
 * - grants: each OP grant with the Gatehouse session it was made in; `revokeGrants` ends grants and
 *   deletes their codes and tokens in one transaction.
 */

/** oidc-provider's models whose rows belong to a grant (`revokeByGrantId` removes them together). */
export const GRANTABLE_MODELS: ReadonlySet<string> = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);

/** Revoked or expired grants stay listed (console, account center, audit trail) this long, then go. */
export const GRANT_RETENTION_MS = 30 * 24 * 3_600_000;

/** Rows per statement where a list of ids goes into `in (…)` (far below both databases' parameter limits). */
const CHUNK = 500;

/** The SHA-256 of an id or user code, base64url: the only form in which either is stored. */
export function opIdHash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

export interface StoredPayload {
  /** The payload as the adapter wrote it (the id is not in it). */
  payload: string;
  /** When it was consumed (epoch ms), by `consume`. */
  consumedAt: number | null;
  expiresAt: number;
}

export interface PayloadToSave {
  payload: string;
  /** The grant the row belongs to (the grantable models only), for `revokeByGrantId`. */
  grantId?: string | undefined;
  /** A Session's uid (oidc-provider finds sessions by it; not a bearer value). */
  uid?: string | undefined;
  /** A DeviceCode's user code: stored hashed. */
  userCode?: string | undefined;
  /** oidc-provider's lifetime, in seconds from now. */
  expiresIn: number;
  /** Saved as consumed already: marked so now (a consume is never undone by a later save). */
  consumed?: boolean | undefined;
}

/** The outcome of a compare-and-set consume. */
export type ConsumeOutcome =
  | { won: true }
  /** Consumed before (another node, another request), expired, or gone; with the row's grant when it is still there. */
  | { won: false; grantId: string | null };

/** Who a grant is between: the client (its app), the person, and the Gatehouse session it was made in. */
export interface GrantParties {
  grantId: string;
  clientId: string;
  appId: string;
  userId: string;
  /** The Gatehouse session the grant was made in. */
  sessionId: string;
  /** The `sid` of the client's ID tokens (and of its logout tokens). */
  sid: string;
  /** The `sub` the client knows the person by. */
  subject: string;
}

export interface OpGrant extends GrantParties {
  scopes: string[];
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  revokedAt: number | null;
  revokedReason: string | null;
}

export interface GrantToRecord extends GrantParties {
  scopes: readonly string[];
  expiresAt: number;
}

/** Which grants `revokeGrants` ends: exactly one of these. */
export type GrantFilter = { grantIds: readonly string[] } | { sessionIds: readonly string[] } | { userId: string } | { appId: string };

type GrantRow = OpGrantsTable;

function toGrant(row: GrantRow): OpGrant {
  return {
    grantId: row.grant_id,
    clientId: row.client_id,
    appId: row.app_id,
    userId: row.user_id,
    sessionId: row.session_id,
    sid: row.sid,
    subject: row.subject,
    scopes: row.scopes === '' ? [] : row.scopes.split(' '),
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
    expiresAt: Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    revokedReason: row.revoked_reason,
  };
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += CHUNK) out.push(items.slice(start, start + CHUNK));
  return out;
}

export class OpStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  // ---- oidc-provider's payloads ----------------------------------------------------------------
  //
  // The statements a token request runs (several per request) are compiled once (storage/fixedQuery.ts):
  // building them with Kysely anew cost more than SQLite takes to run them.

  private readonly upsertPayload = fixedQuery((value: Value<PayloadRow>) =>
    this.db
      .insertInto('op_payloads')
      .values(payloadValues(value))
      .onConflict((conflict) =>
        conflict.columns(['model', 'id_hash']).doUpdateSet((eb) => ({
          payload: eb.ref('excluded.payload'),
          grant_id: eb.ref('excluded.grant_id'),
          uid: eb.ref('excluded.uid'),
          // A save that does not carry the user code (a DeviceCode found by its id) keeps the one stored.
          user_code_hash: eb.fn.coalesce('excluded.user_code_hash', 'op_payloads.user_code_hash'),
          expires_at: eb.ref('excluded.expires_at'),
          // Consumed is for good: a later save (of a copy read before the consume) never undoes it.
          consumed_at: eb.fn.coalesce('op_payloads.consumed_at', 'excluded.consumed_at'),
        })),
      ),
  );

  private readonly insertPayloadUnlessLive = fixedQuery((value: Value<PayloadRow & { now: number }>) =>
    this.db
      .insertInto('op_payloads')
      .values(payloadValues(value))
      .onConflict((conflict) =>
        conflict
          .columns(['model', 'id_hash'])
          .doUpdateSet((eb) => ({ payload: eb.ref('excluded.payload'), expires_at: eb.ref('excluded.expires_at'), consumed_at: null }))
          .where('op_payloads.expires_at', '<=', value('now')),
      ),
  );

  private readonly livePayload = fixedQuery((value: Value<{ model: string; idHash: string; now: number }>) =>
    this.db
      .selectFrom('op_payloads')
      .select(['payload', 'consumed_at', 'expires_at'])
      .where('model', '=', value('model'))
      .where('id_hash', '=', value('idHash'))
      .where('expires_at', '>', value('now')),
  );

  /** The newest live row of a model found by another key than its id (a Session's uid, a DeviceCode's user code). */
  private newestLivePayloadBy(column: 'uid' | 'user_code_hash') {
    return fixedQuery((value: Value<{ model: string; key: string; now: number }>) =>
      this.db
        .selectFrom('op_payloads')
        .select(['payload', 'consumed_at', 'expires_at'])
        .where('model', '=', value('model'))
        .where(column, '=', value('key'))
        .where('expires_at', '>', value('now'))
        .orderBy('expires_at', 'desc')
        .limit(1),
    );
  }

  private readonly livePayloadByUid = this.newestLivePayloadBy('uid');
  private readonly livePayloadByUserCode = this.newestLivePayloadBy('user_code_hash');

  private readonly consumeLivePayload = fixedQuery((value: Value<{ model: string; idHash: string; now: number }>) =>
    this.db
      .updateTable('op_payloads')
      .set({ consumed_at: value('now') })
      .where('model', '=', value('model'))
      .where('id_hash', '=', value('idHash'))
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', value('now')),
  );

  private readonly grantOfPayload = fixedQuery((value: Value<{ model: string; idHash: string }>) =>
    this.db.selectFrom('op_payloads').select('grant_id').where('model', '=', value('model')).where('id_hash', '=', value('idHash')),
  );

  private readonly deletePayload = fixedQuery((value: Value<{ model: string; idHash: string }>) =>
    this.db.deleteFrom('op_payloads').where('model', '=', value('model')).where('id_hash', '=', value('idHash')),
  );

  private readonly deletePayloadsOfGrant = fixedQuery((value: Value<{ grantId: string }>) => this.db.deleteFrom('op_payloads').where('grant_id', '=', value('grantId')));

  /** Inserts or replaces a model's row (oidc-provider saves Sessions, Interactions, Grants again under one id). */
  async savePayload(model: string, id: string, input: PayloadToSave): Promise<void> {
    await this.db.executeQuery(this.upsertPayload(payloadRow(model, id, input, this.now())));
  }

  /**
   * Inserts the row unless a live one has this model and id already (an expired one is replaced):
   * false when one had. One statement, so of two nodes recording one value at once exactly one does.
   */
  async insertPayloadOnce(model: string, id: string, input: PayloadToSave): Promise<boolean> {
    const now = this.now();
    const result = await this.db.executeQuery(this.insertPayloadUnlessLive({ ...payloadRow(model, id, input, now), now }));
    return Number(result.numAffectedRows ?? 0n) > 0;
  }

  /** The live row of this model and id (never one past its expiry). */
  async findPayload(model: string, id: string): Promise<StoredPayload | undefined> {
    const row = (await this.db.executeQuery(this.livePayload({ model, idHash: opIdHash(id), now: this.now() }))).rows[0];
    return row && stored(row);
  }

  /** The live Session with this uid (the newest, should two rows ever share one). */
  async findPayloadByUid(model: string, uid: string): Promise<StoredPayload | undefined> {
    const row = (await this.db.executeQuery(this.livePayloadByUid({ model, key: uid, now: this.now() }))).rows[0];
    return row && stored(row);
  }

  /** The live row of this model with this user code. */
  async findPayloadByUserCode(model: string, userCode: string): Promise<StoredPayload | undefined> {
    const row = (await this.db.executeQuery(this.livePayloadByUserCode({ model, key: opIdHash(userCode), now: this.now() }))).rows[0];
    return row && stored(row);
  }

  /**
   * Marks the row consumed if nobody has yet: a compare-and-set (`consumed_at is null` in the update's
   * own condition), so of two nodes consuming one code or refresh token at once exactly one row update
   * happens (PostgreSQL re-checks the condition on the row the first committed; SQLite runs one
   * statement at a time). An expired row cannot be consumed either.
   */
  async consumePayload(model: string, id: string): Promise<ConsumeOutcome> {
    const idHash = opIdHash(id);
    const result = await this.db.executeQuery(this.consumeLivePayload({ model, idHash, now: this.now() }));
    if (Number(result.numAffectedRows) === 1) return { won: true };
    const row = (await this.db.executeQuery(this.grantOfPayload({ model, idHash }))).rows[0];
    return { won: false, grantId: row?.grant_id ?? null };
  }

  async destroyPayload(model: string, id: string): Promise<void> {
    await this.db.executeQuery(this.deletePayload({ model, idHash: opIdHash(id) }));
  }

  /**
   * Deletes every code and token of the grant (whatever its model), and with `withGrant` oidc-provider's
   * Grant itself: without it, nothing issued under the grant id can be used again.
   */
  async revokePayloadsOfGrant(grantId: string, { withGrant }: { withGrant: boolean }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.executeQuery(this.deletePayloadsOfGrant({ grantId }));
      if (withGrant) await trx.executeQuery(this.deletePayload({ model: 'Grant', idHash: opIdHash(grantId) }));
    });
  }

  // ---- grants and the Gatehouse sessions they belong to ------------------------------------------

  /**
   * Records a grant made in a Gatehouse session; the same grant used again (a new authorization on an
   * existing grant) updates its scopes, expiry and last use. A revoked grant stays revoked.
   */
  async recordGrant(input: GrantToRecord): Promise<OpGrant> {
    const now = this.now();
    const scopes = [...new Set(input.scopes)].join(' ');
    const row = await this.db
      .insertInto('op_grants')
      .values({
        grant_id: input.grantId,
        client_id: input.clientId,
        app_id: input.appId,
        user_id: input.userId,
        session_id: input.sessionId,
        sid: input.sid,
        subject: input.subject,
        scopes,
        created_at: now,
        last_used_at: now,
        expires_at: input.expiresAt,
        revoked_at: null,
        revoked_reason: null,
      })
      .onConflict((conflict) =>
        conflict
          .column('grant_id')
          .doUpdateSet({ scopes, last_used_at: now, expires_at: input.expiresAt })
          .where('op_grants.revoked_at', 'is', null),
      )
      // One statement on the authorization's path (a round trip on PostgreSQL); a revoked grant left as
      // it is returns no row, and is read as it stands.
      .returningAll()
      .executeTakeFirst();
    return row ? toGrant(row) : (await this.grant(input.grantId))!;
  }

  private readonly touchLiveGrant = fixedQuery((value: Value<{ grantId: string; now: number }>) =>
    this.db.updateTable('op_grants').set({ last_used_at: value('now') }).where('grant_id', '=', value('grantId')).where('revoked_at', 'is', null),
  );

  private readonly grantById = fixedQuery((value: Value<{ grantId: string }>) => this.db.selectFrom('op_grants').selectAll().where('grant_id', '=', value('grantId')));

  /** Records a use of the grant (a code exchange, a refresh); nothing for a revoked grant. */
  async touchGrant(grantId: string, now = this.now()): Promise<void> {
    await this.db.executeQuery(this.touchLiveGrant({ grantId, now }));
  }

  async grant(grantId: string): Promise<OpGrant | undefined> {
    const row = (await this.db.executeQuery(this.grantById({ grantId }))).rows[0];
    return row && toGrant(row);
  }

  /** The grants of these Gatehouse sessions still live (not revoked, not expired). */
  async liveGrantsOfSessions(sessionIds: readonly string[]): Promise<OpGrant[]> {
    const now = this.now();
    const found: OpGrant[] = [];
    for (const part of chunks([...new Set(sessionIds)])) {
      const rows = await this.db
        .selectFrom('op_grants')
        .selectAll()
        .where('session_id', 'in', part)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy(inCodePointOrder(this.db, 'grant_id'))
        .execute();
      found.push(...rows.map(toGrant));
    }
    return found;
  }

  async liveGrantsOfUser(userId: string): Promise<OpGrant[]> {
    const rows = await this.db
      .selectFrom('op_grants')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', this.now())
      .orderBy(inCodePointOrder(this.db, 'grant_id'))
      .execute();
    return rows.map(toGrant);
  }

  /** A page of the app's grants (live, revoked and expired until purged), in code-point order of grant id after `after`. */
  async grantsOfApp(appId: string, { after, limit }: { after?: string | undefined; limit: number }): Promise<OpGrant[]> {
    let query = this.db.selectFrom('op_grants').selectAll().where('app_id', '=', appId);
    if (after !== undefined) query = query.where(inCodePointOrder(this.db, 'grant_id'), '>', after);
    const rows = await query.orderBy(inCodePointOrder(this.db, 'grant_id')).limit(limit).execute();
    return rows.map(toGrant);
  }

  /**
   * Ends the grants the filter names that are not ended yet and, in the same transaction, deletes their
   * codes, tokens and oidc-provider Grant: once this returns, nothing issued under them works on any
   * node. Returns the grants it revoked (a second call returns none), for their logout tokens.
   */
  async revokeGrants(filter: GrantFilter, reason: string): Promise<OpGrant[]> {
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      // Two revocations naming overlapping grants (a sign-out everywhere and an admin's suspension at
      // once, on two nodes) would lock the same rows in different orders: one at a time, no deadlock.
      await serializeOn(trx, ['op-grants-revocation']);
      const select = () => trx.selectFrom('op_grants');
      const update = () => trx.updateTable('op_grants').set({ revoked_at: now, revoked_reason: reason }).where('revoked_at', 'is', null);
      let revoked: GrantRow[] = [];
      let grantIds: string[];
      if ('grantIds' in filter) {
        grantIds = [...new Set(filter.grantIds)];
        for (const part of chunks(grantIds)) revoked.push(...(await update().where('grant_id', 'in', part).returningAll().execute()));
      } else if ('sessionIds' in filter) {
        const sessionIds = [...new Set(filter.sessionIds)];
        for (const part of chunks(sessionIds)) revoked.push(...(await update().where('session_id', 'in', part).returningAll().execute()));
        grantIds = [];
        for (const part of chunks(sessionIds)) grantIds.push(...(await select().select('grant_id').where('session_id', 'in', part).execute()).map((row) => row.grant_id));
      } else if ('userId' in filter) {
        revoked = await update().where('user_id', '=', filter.userId).returningAll().execute();
        grantIds = (await select().select('grant_id').where('user_id', '=', filter.userId).execute()).map((row) => row.grant_id);
      } else {
        revoked = await update().where('app_id', '=', filter.appId).returningAll().execute();
        grantIds = (await select().select('grant_id').where('app_id', '=', filter.appId).execute()).map((row) => row.grant_id);
      }
      // Every grant the filter names, revoked now or before: a token written late (a code exchange that
      // was under way on another node while the grant ended) goes too.
      for (const part of chunks(grantIds)) {
        await trx.deleteFrom('op_payloads').where('grant_id', 'in', part).execute();
        await trx
          .deleteFrom('op_payloads')
          .where('model', '=', 'Grant')
          .where('id_hash', 'in', part.map(opIdHash))
          .execute();
      }
      return revoked.map(toGrant).sort((a, b) => (a.grantId < b.grantId ? -1 : a.grantId > b.grantId ? 1 : 0));
    });
  }

  // ---- purge -------------------------------------------------------------------------------------

  /**
   * Removes the payloads past their expiry, and the grants revoked or expired more than
   * GRANT_RETENTION_MS ago (until then the console and the account center show them).
   */
  async purgeExpired(now = this.now()): Promise<{ payloads: number; grants: number }> {
    const payloads = await this.db.deleteFrom('op_payloads').where('expires_at', '<=', now).executeTakeFirst();
    const before = now - GRANT_RETENTION_MS;
    const grants = await this.db
      .deleteFrom('op_grants')
      .where((eb) => eb.or([eb('revoked_at', '<=', before), eb('expires_at', '<=', before)]))
      .executeTakeFirst();
    return { payloads: Number(payloads.numDeletedRows), grants: Number(grants.numDeletedRows) };
  }

  // ---- views: the account center and the console (read only) ------------------------------------

  /**
   * A page of the app's live grants (not revoked, not expired), most recently used first, each with its
   * person and its Gatehouse session, and how many there are: the console's list of who is signed in.
   */
  async liveGrantViewsOfApp(appId: string, page: number, pageSize: number): Promise<{ grants: GrantView[]; total: number }> {
    const now = this.now();
    const live = this.db.selectFrom('op_grants').where('app_id', '=', appId).where('revoked_at', 'is', null).where('expires_at', '>', now);
    const [rows, count] = await Promise.all([
      this.grantViews()
        .where('g.app_id', '=', appId)
        .where('g.revoked_at', 'is', null)
        .where('g.expires_at', '>', now)
        .orderBy('g.last_used_at', 'desc')
        .orderBy(inCodePointOrder(this.db, 'g.grant_id'))
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute(),
      live.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { grants: rows.map(toGrantView), total: Number(count.n) };
  }

  /** The user's live grants, most recently used first, each with its Gatehouse session: the console's user page. */
  async liveGrantViewsOfUser(userId: string): Promise<GrantView[]> {
    const rows = await this.grantViews()
      .where('g.user_id', '=', userId)
      .where('g.revoked_at', 'is', null)
      .where('g.expires_at', '>', this.now())
      .orderBy('g.last_used_at', 'desc')
      .orderBy(inCodePointOrder(this.db, 'g.grant_id'))
      .execute();
    return rows.map(toGrantView);
  }

  private grantViews() {
    return this.db
      .selectFrom('op_grants as g')
      .leftJoin('users as u', 'u.id', 'g.user_id')
      .leftJoin('sessions as s', 's.id', 'g.session_id')
      .selectAll('g')
      .select(['u.email as user_email', 'u.name as user_name', 's.user_agent as session_user_agent', 's.ip as session_ip']);
  }
}

/** A grant as the console lists it: with its person (null when the user is gone) and its session's browser. */
export interface GrantView extends OpGrant {
  user: { email: string; name: string } | null;
  /** The Gatehouse session it was made in, as far as it is still stored. */
  session: { userAgent: string | null; ip: string | null };
}

type GrantViewRow = GrantRow & { user_email: string | null; user_name: string | null; session_user_agent: string | null; session_ip: string | null };

function toGrantView(row: GrantViewRow): GrantView {
  return {
    ...toGrant(row),
    user: row.user_email === null ? null : { email: row.user_email, name: row.user_name ?? '' },
    session: { userAgent: row.session_user_agent, ip: row.session_ip },
  };
}

/** A row of `op_payloads` as the adapter writes it. */
type PayloadRow = OpPayloadsTable;

/** The row's columns, each a value of the fixed query. */
function payloadValues(value: Value<PayloadRow>): PayloadRow {
  return {
    model: value('model'),
    id_hash: value('id_hash'),
    payload: value('payload'),
    grant_id: value('grant_id'),
    uid: value('uid'),
    user_code_hash: value('user_code_hash'),
    expires_at: value('expires_at'),
    consumed_at: value('consumed_at'),
  };
}

function payloadRow(model: string, id: string, input: PayloadToSave, now: number): PayloadRow {
  if (!Number.isFinite(input.expiresIn)) throw new TypeError(`${model}: oidc-provider gave no lifetime to store it with`);
  return {
    model,
    id_hash: opIdHash(id),
    payload: input.payload,
    grant_id: input.grantId ?? null,
    uid: input.uid ?? null,
    user_code_hash: input.userCode === undefined ? null : opIdHash(input.userCode),
    expires_at: now + Math.round(input.expiresIn * 1000),
    consumed_at: input.consumed ? now : null,
  };
}

function stored(row: { payload: string; consumed_at: number | null; expires_at: number }): StoredPayload {
  return { payload: row.payload, consumedAt: row.consumed_at === null ? null : Number(row.consumed_at), expiresAt: Number(row.expires_at) };
}
