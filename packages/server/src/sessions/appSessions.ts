import type { AppConfig } from '../config/schema.js';
import type { Db } from '../storage/database.js';
import type { AppCodesTable } from '../storage/schema.js';
import { hashSecret, isWellFormedSecret, newSecret } from './sessionToken.js';

/** How long a handshake code lives: long enough for two redirects, no longer. */
export const APP_CODE_LIFETIME_MS = 60_000;

/**
 * Per-app-host credentials. A session started on the portal reaches an app on another host through a
 * one-time code (bound to the exact app origin and to a state cookie on the app host, single use,
 * ≤ 60 s); the app host then gets its own cookie holding a distinct token, bound to that origin and tied
 * to the portal session, so revoking the session revokes every app token with it.
 */
export class AppSessions {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async issueCode(input: { sessionId: string; app: AppConfig; state: string; returnTo: string }): Promise<string> {
    const code = newSecret();
    await this.db
      .insertInto('app_codes')
      .values({
        code_hash: hashSecret(code),
        session_id: input.sessionId,
        app_id: input.app.id,
        app_origin: new URL(input.app.publicUrl).origin,
        state_hash: hashSecret(input.state),
        return_to: input.returnTo,
        expires_at: this.now() + APP_CODE_LIFETIME_MS,
      })
      .execute();
    return code;
  }

  /** Takes a code once; only for the origin and state it was issued to, and only before it expires. */
  async redeemCode(code: unknown, state: string | undefined, appOrigin: string): Promise<AppCodesTable | undefined> {
    if (typeof code !== 'string' || !isWellFormedSecret(code) || !state) return undefined;
    const row = await this.db.deleteFrom('app_codes').where('code_hash', '=', hashSecret(code)).returningAll().executeTakeFirst();
    if (!row || row.expires_at <= this.now() || row.app_origin !== appOrigin || row.state_hash !== hashSecret(state)) return undefined;
    return row;
  }

  /** Creates the app host's token for a session; the token itself is never stored. */
  async create(sessionId: string, appId: string, appOrigin: string): Promise<string> {
    const token = newSecret();
    await this.db
      .insertInto('app_sessions')
      .values({ token_hash: hashSecret(token), session_id: sessionId, app_id: appId, app_origin: appOrigin, created_at: this.now() })
      .execute();
    return token;
  }

  async purgeExpiredCodes(): Promise<number> {
    const result = await this.db.deleteFrom('app_codes').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
