import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Db } from '../storage/database.js';
import type { AuditEventRow } from '../storage/schema.js';

/** What happened. Names are stable: the admin console filters on them and exports them. */
export type AuditType =
  | 'sign_in'
  | 'sign_in_failed'
  | 'sign_out'
  | 'session_revoked'
  | 'identity_linked'
  | 'identity_unlinked'
  | 'backchannel_logout';

export interface AuditEvent {
  type: AuditType;
  outcome?: 'success' | 'failure';
  actorUserId?: string | null | undefined;
  targetUserId?: string | null | undefined;
  sessionId?: string | null | undefined;
  providerId?: string | null | undefined;
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

export interface AuditEntry {
  id: string;
  time: number;
  type: string;
  outcome: 'success' | 'failure';
  actorUserId: string | null;
  targetUserId: string | null;
  sessionId: string | null;
  providerId: string | null;
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

  async record(event: AuditEvent): Promise<void> {
    await this.db
      .insertInto('audit_events')
      .values({
        id: randomUUID(),
        time: this.now(),
        type: event.type,
        outcome: event.outcome ?? 'success',
        actor_user_id: event.actorUserId ?? null,
        target_user_id: event.targetUserId ?? null,
        session_id: event.sessionId ?? null,
        provider_id: event.providerId ?? null,
        ip: event.request?.ip ?? null,
        user_agent: event.request?.headers['user-agent']?.slice(0, 512) ?? null,
        details: JSON.stringify(event.details ?? {}),
      })
      .execute();
  }

  /** The most recent events about a user's account, newest first. */
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
    ip: row.ip,
    userAgent: row.user_agent,
    details,
  };
}
