import type { FastifyBaseLogger } from 'fastify';
import type { Session, SessionStore } from '../sessions/sessionStore.js';
import type { LogoutClients } from './backchannelDelivery.js';
import type { DeliveryToEnqueue, LogoutDeliveryStore } from './logoutDeliveryStore.js';
import type { GrantParties } from './opStore.js';

/**
 * Sessions tie it together: every grant of the OpenID Provider belongs to the Gatehouse session it was
 * made in, and when that session ends — for whatever reason, on whichever node or worker, or by
 * running out — its grants end (their codes and tokens deleted) and every app of them with a
 * back-channel logout URI is owed a logout token (the outbox, provide/logoutDeliveryStore.ts).
 *
 * Two paths, so that none is lost:
 * - at once: the revoking process hears its own revocations (`SessionStore.onRevoke`) and ends the
 *   grants there, before the revocation is answered;
 * - the sweep, in every process, every `interval`: grants whose session is no longer active — expired
 *   (idle or absolute expiry publish nothing), or revoked by a process that died before it ended the
 *   grants — end too; and every grant ended lately for which no logout is owed (a process that died
 *   between ending a grant and enqueueing its logout: two transactions) gets one.
 */

/** A grant as it ended (provide/opStore.ts `OpGrant` is one). */
export type EndedGrant = GrantParties;

/**
 * Ends grants: in one transaction, marks those of these sessions that are not ended yet as revoked with
 * `reason` and deletes their codes and tokens; returns the grants it ended (none when called again).
 * provide/opStore.ts `OpStore.revokeGrants` is one.
 */
export interface GrantEnder {
  revokeGrants(filter: { sessionIds: readonly string[] }, reason: string): Promise<EndedGrant[]>;
}

export interface SessionTiesDeps {
  sessions: Pick<SessionStore, 'onRevoke'>;
  grants: GrantEnder;
  outbox: Pick<LogoutDeliveryStore, 'enqueue' | 'grantsOfEndedSessions' | 'endedGrantsWithoutDelivery' | 'purgeFinished'>;
  clients: LogoutClients;
  /** The drain loop of this process, woken when a logout is owed (provide/backchannelDelivery.ts). */
  delivery: { wake(): void };
  log: FastifyBaseLogger;
  now?: () => number;
}

export interface SessionTiesOptions {
  /** How often the sweep runs (ms). */
  interval: number;
  /** Grants looked at per query. */
  batch: number;
  /** How far back the sweep looks for ended grants without a logout owed (ms): as long as a logout is worth delivering. */
  recoveryWindow: number;
  /** Deliveries delivered or abandoned longer ago than this are removed (ms): longer than `recoveryWindow`, or they would be owed again. */
  keepFinished: number;
}

export const DEFAULT_SESSION_TIES_OPTIONS: SessionTiesOptions = {
  interval: 30_000,
  batch: 200,
  recoveryWindow: 24 * 3_600_000,
  keepFinished: 30 * 24 * 3_600_000,
};

/** At most this many batches per sweep: a large backlog is worked through over several, never in one long run. */
const MAX_BATCHES = 50;
/** How often the finished deliveries are purged (ms). */
const PURGE_EVERY = 3_600_000;

export class SessionTies {
  private readonly options: SessionTiesOptions;
  private readonly now: () => number;
  private started = false;
  private listening = false;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(
    private readonly deps: SessionTiesDeps,
    options: Partial<SessionTiesOptions> = {},
  ) {
    this.options = { ...DEFAULT_SESSION_TIES_OPTIONS, ...options };
    if (this.options.keepFinished <= this.options.recoveryWindow) throw new Error('keepFinished must be longer than recoveryWindow');
    this.now = deps.now ?? Date.now;
  }

  /** Listens to this process's revocations and starts the sweep (a first one soon, at a random moment within the interval). */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (!this.listening) {
      this.listening = true;
      // SessionStore keeps its listeners for good: this one does nothing while stopped.
      this.deps.sessions.onRevoke((sessions) => (this.started ? this.sessionsEnded(sessions) : undefined));
    }
    this.schedule(Math.round(Math.random() * this.options.interval));
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    await this.sweeping;
  }

  /**
   * Sessions ended here: their grants end and their logouts are owed. Never fails (a revocation is
   * answered whatever happens here): what could not be done now, the sweep does.
   */
  async sessionsEnded(sessions: readonly Pick<Session, 'id' | 'revoked_reason'>[]): Promise<void> {
    const byReason = new Map<string, string[]>();
    for (const session of sessions) {
      const reason = session.revoked_reason ?? 'session-revoked';
      byReason.set(reason, [...(byReason.get(reason) ?? []), session.id]);
    }
    for (const [reason, sessionIds] of byReason) {
      try {
        await this.endGrantsOf(sessionIds, reason);
      } catch (error) {
        this.deps.log.error({ err: error, sessions: sessionIds.length }, 'the grants of ended sessions could not be ended now; the sweep will');
      }
    }
  }

  /**
   * Grants ended elsewhere (one app's access revoked in the account center, say): their logouts are
   * owed now rather than at the next sweep. Returns how many were new.
   */
  async grantsEnded(grants: readonly EndedGrant[], reason: string): Promise<number> {
    const deliveries = grants.flatMap((grant) => this.deliveryFor(grant, reason));
    if (deliveries.length === 0) return 0;
    const owed = await this.deps.outbox.enqueue(deliveries);
    if (owed > 0) this.deps.delivery.wake();
    return owed;
  }

  /** One sweep (the timer's, and the tests'): resolves to how many grants it ended and how many logouts it found missing. */
  async sweep(): Promise<{ ended: number; recovered: number }> {
    const { outbox, clients } = this.deps;
    let ended = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const found = await outbox.grantsOfEndedSessions(this.options.batch);
      const byReason = new Map<string, Set<string>>();
      for (const grant of found) byReason.set(grant.reason, (byReason.get(grant.reason) ?? new Set()).add(grant.sessionId));
      for (const [reason, sessionIds] of byReason) ended += await this.endGrantsOf([...sessionIds], reason);
      // Another process may have ended the same grants meanwhile; what is left is looked at again.
      if (found.length < this.options.batch) break;
    }
    let recovered = 0;
    const since = this.now() - this.options.recoveryWindow;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const missing = await outbox.endedGrantsWithoutDelivery(clients.withBackchannel(), since, this.options.batch);
      const deliveries = missing.flatMap((grant) => this.deliveryFor(grant, grant.reason));
      if (deliveries.length > 0) recovered += await outbox.enqueue(deliveries);
      if (missing.length < this.options.batch || deliveries.length === 0) break;
    }
    if (recovered > 0) {
      this.deps.log.warn({ recovered }, 'back-channel logout: logouts found missing for ended grants were enqueued');
      this.deps.delivery.wake();
    }
    if (this.now() - this.lastPurge >= PURGE_EVERY) {
      this.lastPurge = this.now();
      await outbox.purgeFinished(this.now() - this.options.keepFinished);
    }
    return { ended, recovered };
  }

  private async endGrantsOf(sessionIds: readonly string[], reason: string): Promise<number> {
    if (sessionIds.length === 0) return 0;
    const ended = await this.deps.grants.revokeGrants({ sessionIds }, reason);
    if (ended.length > 0) await this.grantsEnded(ended, reason);
    return ended.length;
  }

  /** The logout owed for a grant, when its app takes logout tokens (at the URI registered now). */
  private deliveryFor(grant: EndedGrant, reason: string): DeliveryToEnqueue[] {
    const uri = this.deps.clients.client(grant.appId)?.backchannelLogoutUri;
    if (!uri) return [];
    const { grantId, clientId, appId, userId, sessionId, sid, subject } = grant;
    return [{ grantId, clientId, appId, userId, sessionId, sid, subject, uri, reason }];
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), delay);
    this.timer.unref();
  }

  private tick(): void {
    if (!this.started) return;
    this.sweeping = this.sweep()
      .then(
        () => undefined,
        (error: unknown) => this.deps.log.error({ err: error }, 'the sweep of ended sessions failed; trying again at the next'),
      )
      .finally(() => {
        this.sweeping = undefined;
        if (this.started) this.schedule(this.options.interval);
      });
  }
}
