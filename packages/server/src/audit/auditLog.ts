import { randomUUID } from 'node:crypto';
import type { AuditEventType } from '@gatehouse/contract';
import { sql } from 'kysely';
import type { IncomingHttpHeaders } from 'node:http';
import type { Db } from '../storage/database.js';
import { inCodePointOrder } from '../storage/dialect.js';
import type { AuditEventRow } from '../storage/schema.js';
import { storableText } from '../storage/text.js';

export interface AuditEvent {
  /** One of the contract's `auditEventTypes`: recording another name does not compile. */
  type: AuditEventType;
  outcome?: 'success' | 'failure';
  actorUserId?: string | null | undefined;
  targetUserId?: string | null | undefined;
  sessionId?: string | null | undefined;
  providerId?: string | null | undefined;
  appId?: string | null | undefined;
  /** The request it came from, for IP and user agent. */
  request?: RequestContext | undefined;
  /** Plain facts only: never a token, secret or cookie value. */
  details?: Record<string, unknown>;
}

/** What the audit log reads of a request (a FastifyRequest is one). */
export interface RequestContext {
  ip?: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface AuditFilter {
  type?: AuditEventType | undefined;
  outcome?: 'success' | 'failure' | undefined;
  userId?: string | undefined;
  appId?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
}

export interface AuditEntry {
  id: string;
  time: number;
  type: string;
  outcome: 'success' | 'failure';
  actorUserId: string | null;
  targetUserId: string | null;
  sessionId: string | null;
  providerId: string | null;
  appId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

/** The audit log: append-only facts about sign-ins, sessions and identities. */
export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Appends an event; returns its id (the console's test sign-in shows its result from it). */
  async record(event: AuditEvent): Promise<string> {
    const id = randomUUID();
    await this.db
      .insertInto('audit_events')
      .values({
        id,
        time: this.now(),
        type: event.type,
        outcome: event.outcome ?? 'success',
        actor_user_id: event.actorUserId ?? null,
        target_user_id: event.targetUserId ?? null,
        session_id: event.sessionId ?? null,
        provider_id: event.providerId ?? null,
        app_id: event.appId ?? null,
        ip: event.request?.ip ?? null,
        user_agent: storableText(event.request?.headers['user-agent'], 512),
        details: JSON.stringify(event.details ?? {}),
      })
      .execute();
    return id;
  }

  /** One event by id. */
  async get(id: string): Promise<AuditEntry | undefined> {
    const row = await this.db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toEntry(row) : undefined;
  }

  /** Events matching the filters, newest first, a page at a time, with the total count. */
  async query(filter: AuditFilter, page: number, pageSize: number): Promise<{ events: AuditEntry[]; total: number }> {
    const base = this.filtered(filter);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('time', 'desc').orderBy('id').limit(pageSize).offset((page - 1) * pageSize).execute(),
      base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { events: rows.map(toEntry), total: Number(count.n) };
  }

  /** Every matching event, newest first, in batches (for CSV export without loading all at once). */
  async *stream(filter: AuditFilter, batch = 1000): AsyncGenerator<AuditEntry[]> {
    for (let offset = 0; ; offset += batch) {
      const rows = await this.filtered(filter).selectAll().orderBy('time', 'desc').orderBy('id').limit(batch).offset(offset).execute();
      if (rows.length === 0) return;
      yield rows.map(toEntry);
      if (rows.length < batch) return;
    }
  }

  /** Counts per time bucket of the given types since `from` (bucket = floor(time / size)). */
  async countsByBucket(types: readonly AuditEventType[], from: number, bucketMs: number): Promise<Array<{ bucket: number; type: string; n: number }>> {
    // An integer on both databases (SQLite divides by a bound number as a real), grouped by its alias:
    // PostgreSQL does not see the select's and the group by's parameters as one expression.
    const bucket = sql<number>`cast(time / ${bucketMs} as bigint)`;
    const rows = await this.db
      .selectFrom('audit_events')
      .select([bucket.as('bucket'), 'type', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('time', '>=', from)
      .where('type', 'in', [...types])
      .groupBy([sql.ref('bucket'), 'type'])
      .execute();
    return rows.map((row) => ({ bucket: Math.floor(Number(row.bucket)), type: row.type, n: Number(row.n) }));
  }

  private filtered(filter: AuditFilter) {
    let query = this.db.selectFrom('audit_events');
    if (filter.type) query = query.where('type', '=', filter.type);
    if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
    if (filter.userId) query = query.where((eb) => eb.or([eb('target_user_id', '=', filter.userId!), eb('actor_user_id', '=', filter.userId!)]));
    if (filter.appId) query = query.where('app_id', '=', filter.appId);
    if (filter.from !== undefined) query = query.where('time', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('time', '<', filter.to);
    return query;
  }

  /** The apps with the most access denials since `from`, most first; apps with as many, by id (the cut at `limit` is the same every time). */
  async topDeniedApps(from: number, limit: number): Promise<Array<{ appId: string; denials: number }>> {
    const rows = await this.db
      .selectFrom('audit_events')
      .select(['app_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('type', '=', 'access_denied')
      .where('time', '>=', from)
      .where('app_id', 'is not', null)
      .groupBy('app_id')
      .orderBy('n', 'desc')
      .orderBy(inCodePointOrder(this.db, 'app_id'))
      .limit(limit)
      .execute();
    return rows.map((row) => ({ appId: row.app_id!, denials: Number(row.n) }));
  }

  /** The most recent events about a user's account, newest first. */
  /** A person's own events (they were acted on), newest first, a page at a time, with how many there are. */
  async pageForUser(userId: string, page: number, pageSize: number): Promise<{ events: AuditEntry[]; total: number }> {
    const base = this.db.selectFrom('audit_events').where('target_user_id', '=', userId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('time', 'desc').orderBy('id').limit(pageSize).offset((page - 1) * pageSize).execute(),
      base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { events: rows.map(toEntry), total: Number(count.n) };
  }

  async forUser(userId: string, limit = 20): Promise<AuditEntry[]> {
    const rows = await this.db
      .selectFrom('audit_events')
      .selectAll()
      .where('target_user_id', '=', userId)
      .orderBy('time', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toEntry);
  }
}

function toEntry(row: AuditEventRow): AuditEntry {
  let details: Record<string, unknown> = {};
  try {
    details = JSON.parse(row.details) as Record<string, unknown>;
  } catch {
    // an unreadable details column shows as no details
  }
  return {
    id: row.id,
    time: row.time,
    type: row.type,
    outcome: row.outcome,
    actorUserId: row.actor_user_id,
    targetUserId: row.target_user_id,
    sessionId: row.session_id,
    providerId: row.provider_id,
    appId: row.app_id,
    ip: row.ip,
    userAgent: row.user_agent,
    details,
  };
}
