import type { Db } from '../storage/database.js';
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
  ip?: string | undefined;
  userAgent?: string | undefined;
}

export type RevokeReason = 'sign-out' | 'rotated' | 'revoked-by-user' | 'revoked-by-admin' | 'backchannel-logout' | 'suspended' | 'refresh-failed';

export type Session = SessionRow;

/** Server-side sessions: the cookie holds a secret, the database its hash and everything else. */
export class SessionStore {
  constructor(
    private readonly db: Db,
    private readonly cipher: TokenCipher,
    private readonly timeouts: SessionTimeouts,
    private readonly now: () => number = Date.now,
  ) {}

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
      user_agent: input.userAgent?.slice(0, 512) ?? null,
      revoked_at: null,
      revoked_reason: null,
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

  async findById(id: string): Promise<Session | undefined> {
    return this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Records activity and slides the idle expiry, at most once per touchInterval: a write per request
   * would make every page view a database write.
   */
  async touch(session: Session): Promise<Session> {
    const now = this.now();
    if (now - session.last_seen_at < this.timeouts.touchInterval) return session;
    const idleExpiresAt = Math.min(now + this.timeouts.idleTimeout, session.absolute_expires_at);
    await this.db
      .updateTable('sessions')
      .set({ last_seen_at: now, idle_expires_at: idleExpiresAt })
      .where('id', '=', session.id)
      .where('revoked_at', 'is', null)
      .execute();
    return { ...session, last_seen_at: now, idle_expires_at: idleExpiresAt };
  }

  async revoke(id: string, reason: RevokeReason): Promise<boolean> {
    const result = await this.db
      .updateTable('sessions')
      .set({ revoked_at: this.now(), revoked_reason: reason, refresh_token_enc: null })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  idToken(session: Session): string | undefined {
    return session.id_token_enc ? this.cipher.decrypt(session.id_token_enc, tokenContext(session.id, 'id_token')) : undefined;
  }

  refreshToken(session: Session): string | undefined {
    return session.refresh_token_enc
      ? this.cipher.decrypt(session.refresh_token_enc, tokenContext(session.id, 'refresh_token'))
      : undefined;
  }

  /** When the session ends by itself: the earlier of the idle and absolute expiries. */
  static expiresAt(session: Session): number {
    return Math.min(session.idle_expires_at, session.absolute_expires_at);
  }
}

export function isActive(session: Session, now: number): boolean {
  return session.revoked_at === null && now < session.idle_expires_at && now < session.absolute_expires_at;
}

function tokenContext(sessionId: string, purpose: 'id_token' | 'refresh_token'): string {
  return `gatehouse/session/${sessionId}/${purpose}`;
}
