import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../storage/database.js';
import { dialectOf } from '../storage/dialect.js';
import type { OpLogoutDeliveriesTable } from '../storage/schema.js';
import type { GrantParties } from './opStore.js';
import { storableText } from '../storage/text.js';

/**
 * The back-channel logout outbox (`op_logout_deliveries`, OpenID Connect Back-Channel Logout 1.0): one
 * row per ended grant whose app has a back-channel logout URI, written when the grant ends and drained
 * by whichever node or worker comes first (provide/backchannelDelivery.ts). The outbox is what makes a
 * logout survive a crash, a restart or a node going away: nothing of it lives only in memory.
 *
 * The only code that queries this table. It also holds the two queries of the sweep that ties grants
 * to their Gatehouse sessions (provide/sessionTies.ts), which read op_grants beside sessions and the
 * outbox.
 */

/** A logout owed to an app for one grant. */
export interface DeliveryToEnqueue extends GrantParties {
  /** The back-channel logout URI registered when the grant ended (delivery posts to the one registered then). */
  uri: string;
  /** Why the grant ended (the session's end reason, `session-expired`, …). */
  reason: string;
}

/** A delivery this process holds until `claimedUntil` (its claim: outcomes are recorded against it). */
export interface ClaimedDelivery extends DeliveryToEnqueue {
  id: string;
  createdAt: number;
  /** The attempts made before this one. */
  attempts: number;
  claimedUntil: number;
}

/** How failures are retried: exponential backoff with jitter, then given up. */
export interface RetryPolicy {
  /** The delay after the first failure (ms); doubled after each further one. */
  firstDelay: number;
  /** The longest delay between two attempts (ms). */
  maxDelay: number;
  /** Attempts after which the delivery is abandoned. */
  maxAttempts: number;
  /** How long after it was enqueued a delivery is abandoned (ms): a logout a day late helps no one. */
  maxAge: number;
}

/**
 * 10 s doubling to 30 min, abandoned 24 hours after the logout (about 50 attempts): an app down for
 * maintenance over a night still hears of it. The bound on attempts only matters with shorter delays.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { firstDelay: 10_000, maxDelay: 30 * 60_000, maxAttempts: 100, maxAge: 24 * 3_600_000 };

/** What the outcome of a failed attempt was. */
export type FailureOutcome =
  | { outcome: 'retry'; attempts: number; nextAttemptAt: number }
  | { outcome: 'abandoned'; attempts: number }
  /** The claim was lost (it ran out and another node took the delivery over): nothing recorded. */
  | { outcome: 'lost' };

/** The outbox of one app, for the console. */
export interface AppDeliveryCounts {
  appId: string;
  pending: number;
  delivered: number;
  abandoned: number;
}

/** A live grant whose Gatehouse session is no longer active (the sweep ends it). */
export interface GrantOfEndedSession {
  grantId: string;
  sessionId: string;
  /** Why the session ended: its revocation reason, `session-expired`, or `session-gone` when the row is gone. */
  reason: string;
}

/** A grant ended without a delivery owed for it (the process that ended it stopped before it enqueued). */
export interface EndedGrantWithoutDelivery extends GrantParties {
  reason: string;
}

/** SQLite's bound-parameter limit is 32,766; 13 columns a row. */
const INSERT_CHUNK = 500;
/** What is kept of an error: enough to tell a refused connection from a 503. */
const MAX_ERROR_LENGTH = 300;

export class LogoutDeliveryStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    /** In [0, 1): the jitter of the retries (tests pass a fixed one). */
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * Owes these logouts, each at most once per grant: a grant that has a delivery already (ended twice,
   * by two nodes, by the revocation and the sweep) is left as it is. Insert-or-ignore on the unique
   * index on grant_id, on both databases, so two processes enqueueing one grant at once make one row.
   * Returns how many were new.
   */
  async enqueue(deliveries: readonly DeliveryToEnqueue[]): Promise<number> {
    const now = this.now();
    // In one order everywhere: two processes inserting the same grants in other orders each wait on a
    // row the other inserted first, and PostgreSQL ends one of them as a deadlock.
    const sorted = [...deliveries].sort((a, b) => (a.grantId < b.grantId ? -1 : a.grantId > b.grantId ? 1 : 0));
    let inserted = 0;
    for (let start = 0; start < sorted.length; start += INSERT_CHUNK) {
      const rows = sorted.slice(start, start + INSERT_CHUNK).map((delivery) => ({
        id: randomUUID(),
        grant_id: delivery.grantId,
        client_id: delivery.clientId,
        app_id: delivery.appId,
        user_id: delivery.userId,
        session_id: delivery.sessionId,
        sid: delivery.sid,
        subject: delivery.subject,
        uri: delivery.uri,
        reason: delivery.reason,
        created_at: now,
        attempts: 0,
        next_attempt_at: now,
      }));
      const result = await this.db
        .insertInto('op_logout_deliveries')
        .values(rows)
        .onConflict((conflict) => conflict.column('grant_id').doNothing())
        .executeTakeFirst();
      inserted += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
    return inserted;
  }

  /**
   * Claims up to `limit` deliveries that are due, for `lease` ms: a compare-and-set on claimed_until
   * (unclaimed, or its claim ran out), so of two nodes claiming at once each gets other rows, never the
   * same (on PostgreSQL the losing update re-reads the row after the winner commits and finds it
   * claimed; SKIP LOCKED only spares it the wait). A node that dies holding a claim loses it when the
   * lease ends, and another node delivers. Leases are read on each node's clock: the nodes' clocks must
   * agree to well within a lease (NTP does), as they must for sessions' expiry anyway.
   */
  async claimDue(limit: number, lease: number): Promise<ClaimedDelivery[]> {
    const now = this.now();
    const claimedUntil = now + lease;
    const postgres = dialectOf(this.db) === 'postgres';
    // The due rows are picked once, in a materialised CTE: PostgreSQL may run a plain `in (select …
    // limit n)` again for each row it updates, and so claim more than n rows.
    const rows = await this.db
      .with(
        (cte) => cte('due').materialized(),
        (db) => {
          const due = db
            .selectFrom('op_logout_deliveries')
            .select('id')
            .where('delivered_at', 'is', null)
            .where('abandoned_at', 'is', null)
            .where('next_attempt_at', '<=', now)
            .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
            .orderBy('next_attempt_at')
            .orderBy('id')
            .limit(limit);
          return postgres ? due.forUpdate().skipLocked() : due;
        },
      )
      .updateTable('op_logout_deliveries')
      .set({ claimed_until: claimedUntil })
      .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
      .where('delivered_at', 'is', null)
      .where('abandoned_at', 'is', null)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .returningAll()
      .execute();
    return rows.map(toClaimed).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The app took the logout token. False when the claim was lost meanwhile (nothing recorded). */
  async recordDelivered(claim: ClaimedDelivery): Promise<boolean> {
    const result = await this.db
      .updateTable('op_logout_deliveries')
      .set({ delivered_at: this.now(), attempts: claim.attempts + 1, claimed_until: null, last_error: null })
      .where('id', '=', claim.id)
      .where('claimed_until', '=', claim.claimedUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * An attempt failed: it is tried again after a backoff (doubling from the policy's first delay, with
   * jitter so that the deliveries owed to an app that was down do not all come back at one instant), or
   * abandoned when the attempts or the time ran out. `error` says what went wrong; it is kept cut short
   * and must never hold the token.
   */
  async recordFailed(claim: ClaimedDelivery, error: string, policy: RetryPolicy): Promise<FailureOutcome> {
    const now = this.now();
    const attempts = claim.attempts + 1;
    const backoff = Math.min(policy.maxDelay, policy.firstDelay * 2 ** Math.min(attempts - 1, 30));
    // "Equal jitter": between half the backoff and all of it.
    const nextAttemptAt = now + Math.round(backoff * (0.5 + this.random() * 0.5));
    const abandon = attempts >= policy.maxAttempts || nextAttemptAt >= claim.createdAt + policy.maxAge;
    const result = await this.db
      .updateTable('op_logout_deliveries')
      .set({
        attempts,
        claimed_until: null,
        last_error: storableText(error, MAX_ERROR_LENGTH),
        ...(abandon ? { abandoned_at: now } : { next_attempt_at: nextAttemptAt }),
      })
      .where('id', '=', claim.id)
      .where('claimed_until', '=', claim.claimedUntil)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return { outcome: 'lost' };
    return abandon ? { outcome: 'abandoned', attempts } : { outcome: 'retry', attempts, nextAttemptAt };
  }

  /** Gives up on a delivery at once (its app has no back-channel URI any more): no attempt is made. */
  async abandon(claim: ClaimedDelivery, why: string): Promise<boolean> {
    const result = await this.db
      .updateTable('op_logout_deliveries')
      .set({ abandoned_at: this.now(), claimed_until: null, last_error: storableText(why, MAX_ERROR_LENGTH) })
      .where('id', '=', claim.id)
      .where('claimed_until', '=', claim.claimedUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Lets go of a claim without an attempt counted (the process is stopping, or the claim was about to
   * run out): the delivery is due again at once, for whichever process looks next.
   */
  async release(claim: ClaimedDelivery): Promise<boolean> {
    const result = await this.db
      .updateTable('op_logout_deliveries')
      .set({ claimed_until: null })
      .where('id', '=', claim.id)
      .where('claimed_until', '=', claim.claimedUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Per app: the deliveries still owed, those delivered and those abandoned (the console). */
  async countsByApp(): Promise<AppDeliveryCounts[]> {
    const rows = await this.db
      .selectFrom('op_logout_deliveries')
      .select([
        'app_id',
        sql<number | string>`sum(case when delivered_at is null and abandoned_at is null then 1 else 0 end)`.as('pending'),
        sql<number | string>`sum(case when delivered_at is not null then 1 else 0 end)`.as('delivered'),
        sql<number | string>`sum(case when abandoned_at is not null then 1 else 0 end)`.as('abandoned'),
      ])
      .groupBy('app_id')
      .orderBy('app_id')
      .execute();
    return rows.map((row) => ({ appId: row.app_id, pending: Number(row.pending), delivered: Number(row.delivered), abandoned: Number(row.abandoned) }));
  }

  /** One delivery by its grant (the console's detail, the tests). */
  async forGrant(grantId: string): Promise<(ClaimedDelivery & { deliveredAt: number | null; abandonedAt: number | null; lastError: string | null; nextAttemptAt: number }) | undefined> {
    const row = await this.db.selectFrom('op_logout_deliveries').selectAll().where('grant_id', '=', grantId).executeTakeFirst();
    if (!row) return undefined;
    return {
      ...toClaimed(row),
      deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
      abandonedAt: row.abandoned_at === null ? null : Number(row.abandoned_at),
      lastError: row.last_error,
      nextAttemptAt: Number(row.next_attempt_at),
    };
  }

  /**
   * The sweep, first half: live grants whose Gatehouse session is no longer active — revoked (the
   * process that revoked it may have died before it ended the grants), expired (idle or absolute
   * expiry publish nothing), or gone. Up to `limit`, oldest session first.
   */
  async grantsOfEndedSessions(limit: number): Promise<GrantOfEndedSession[]> {
    const now = this.now();
    const rows = await this.db
      .selectFrom('op_grants')
      .leftJoin('sessions', 'sessions.id', 'op_grants.session_id')
      .select(['op_grants.grant_id as grantId', 'op_grants.session_id as sessionId', 'sessions.id as found', 'sessions.revoked_at as revokedAt', 'sessions.revoked_reason as revokedReason'])
      .where('op_grants.revoked_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('sessions.id', 'is', null),
          eb('sessions.revoked_at', 'is not', null),
          eb('sessions.idle_expires_at', '<=', now),
          eb('sessions.absolute_expires_at', '<=', now),
        ]),
      )
      .orderBy('op_grants.created_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      grantId: row.grantId,
      sessionId: row.sessionId,
      reason: row.found === null ? 'session-gone' : row.revokedAt !== null ? (row.revokedReason ?? 'session-revoked') : 'session-expired',
    }));
  }

  /**
   * The sweep, second half: grants of these apps ended since `since` for which no delivery is owed —
   * the process that ended them stopped before it enqueued (ending and enqueueing are two
   * transactions), or they were ended by something that does not enqueue. Up to `limit`.
   */
  async endedGrantsWithoutDelivery(appIds: readonly string[], since: number, limit: number): Promise<EndedGrantWithoutDelivery[]> {
    if (appIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('op_grants')
      .select(['grant_id', 'client_id', 'app_id', 'user_id', 'session_id', 'sid', 'subject', 'revoked_reason'])
      .where('revoked_at', 'is not', null)
      .where('revoked_at', '>', since)
      .where('app_id', 'in', [...appIds])
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('op_logout_deliveries').select('op_logout_deliveries.id').whereRef('op_logout_deliveries.grant_id', '=', 'op_grants.grant_id'))),
      )
      .orderBy('revoked_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      grantId: row.grant_id,
      clientId: row.client_id,
      appId: row.app_id,
      userId: row.user_id,
      sessionId: row.session_id,
      sid: row.sid,
      subject: row.subject,
      reason: row.revoked_reason ?? 'grant-revoked',
    }));
  }

  /** Removes the deliveries delivered or abandoned before `before` (the counts are of what is kept). */
  async purgeFinished(before: number): Promise<number> {
    const result = await this.db
      .deleteFrom('op_logout_deliveries')
      .where((eb) => eb.or([eb('delivered_at', '<=', before), eb('abandoned_at', '<=', before)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toClaimed(row: Selectable<OpLogoutDeliveriesTable>): ClaimedDelivery {
  return {
    id: row.id,
    grantId: row.grant_id,
    clientId: row.client_id,
    appId: row.app_id,
    userId: row.user_id,
    sessionId: row.session_id,
    sid: row.sid,
    subject: row.subject,
    uri: row.uri,
    reason: row.reason,
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
    claimedUntil: Number(row.claimed_until),
  };
}
