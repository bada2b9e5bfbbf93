import type { Db } from './database.js';

/** Remembered logout-token ids are only needed until the tokens themselves expire. */
export async function purgeLogoutTokenJtis(db: Db, now = Date.now()): Promise<number> {
  const result = await db.deleteFrom('logout_token_jtis').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
