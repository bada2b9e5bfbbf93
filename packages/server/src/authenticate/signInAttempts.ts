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
    const row = await this.db
      .deleteFrom('sign_in_attempts')
      .where('state_hash', '=', sha256(state))
      .returningAll()
      .executeTakeFirst();
    if (!row || row.expires_at <= this.now() || !bindingSecret) return undefined;
    const expected = Buffer.from(row.binding_hash);
    const actual = Buffer.from(sha256(bindingSecret));
    return expected.length === actual.length && timingSafeEqual(expected, actual) ? row : undefined;
  }

  /** Removes expired attempts (called periodically). */
  async purgeExpired(): Promise<number> {
    const result = await this.db.deleteFrom('sign_in_attempts').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
