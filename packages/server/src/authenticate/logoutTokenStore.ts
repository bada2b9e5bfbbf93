import type { Db } from '../storage/database.js';

/**
 * The `jti`s of the back-channel logout tokens already acted on, per provider, until they expire
 * (storage/purge.ts removes them after): a logout token works once.
 */
export class LogoutTokenStore {
  constructor(private readonly db: Db) {}

  /** Records a token's jti; false when it was seen before (a replay). */
  async remember(providerId: string, jti: string, expiresAt: number): Promise<boolean> {
    const result = await this.db
      .insertInto('logout_token_jtis')
      .values({ provider_id: providerId, jti, expires_at: expiresAt })
      .onConflict((conflict) => conflict.columns(['provider_id', 'jti']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
}
