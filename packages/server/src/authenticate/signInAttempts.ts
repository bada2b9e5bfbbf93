import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db } from '../storage/database.js';
import type { SignInAttempt } from '../storage/schema.js';

export type { SignInAttempt };

export interface NewSignInAttempt {
  state: string;
  bindingSecret: string;
  providerId: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  purpose: SignInAttempt['purpose'];
  userId?: string | undefined;
  sessionId?: string | undefined;
}

/** Why a callback found no attempt to complete (logged, never shown). */
export type AttemptMissing = 'unknown_state' | 'expired' | 'no_binding_cookie' | 'other_browser';

export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/**
 * Pending sign-ins. A state is accepted once: `consume` deletes the row in the same statement that
 * reads it, so two callbacks racing with one state cannot both succeed.
 */
export class SignInAttempts {
  constructor(
    private readonly db: Db,
    /** How long an attempt may take, or where to read it at each use (a config reload may change it). */
    private readonly lifetime: number | (() => number),
    private readonly now: () => number = Date.now,
  ) {}

  private get lifetimeMs(): number {
    return typeof this.lifetime === 'number' ? this.lifetime : this.lifetime();
  }

  async create(attempt: NewSignInAttempt): Promise<void> {
    const now = this.now();
    await this.db
      .insertInto('sign_in_attempts')
      .values({
        state_hash: sha256(attempt.state),
        binding_hash: sha256(attempt.bindingSecret),
        provider_id: attempt.providerId,
        nonce: attempt.nonce,
        code_verifier: attempt.codeVerifier,
        return_to: attempt.returnTo,
        purpose: attempt.purpose,
        user_id: attempt.userId ?? null,
        session_id: attempt.sessionId ?? null,
        created_at: now,
        expires_at: now + this.lifetimeMs,
      })
      .execute();
  }

  /**
   * Takes the attempt for a state if it exists, has not expired and was started by this browser.
   * Anything else (unknown, replayed, expired, another browser) is the same answer: undefined.
   */
  async consume(state: string, bindingSecret: string | undefined): Promise<SignInAttempt | undefined> {
    const taken = await this.take(state, bindingSecret);
    return 'attempt' in taken ? taken.attempt : undefined;
  }

  /**
   * `consume`, saying why there is no attempt: the person gets one answer whatever the reason
   * (`sign_in_expired`), but the log says which, so "Sign-in expired" has a cause an operator can read.
   */
  async take(state: string, bindingSecret: string | undefined): Promise<{ attempt: SignInAttempt } | { missing: AttemptMissing }> {
    const row = await this.db
      .deleteFrom('sign_in_attempts')
      .where('state_hash', '=', sha256(state))
      .returningAll()
      .executeTakeFirst();
    if (!row) return { missing: 'unknown_state' };
    if (row.expires_at <= this.now()) return { missing: 'expired' };
    if (!bindingSecret) return { missing: 'no_binding_cookie' };
    const expected = Buffer.from(row.binding_hash);
    const actual = Buffer.from(sha256(bindingSecret));
    return expected.length === actual.length && timingSafeEqual(expected, actual) ? { attempt: row } : { missing: 'other_browser' };
  }

  /** Removes expired attempts (called periodically). */
  async purgeExpired(): Promise<number> {
    const result = await this.db.deleteFrom('sign_in_attempts').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
