import { sql } from 'kysely';
import type { Db } from '../storage/database.js';

/**
 * The one statement the change feed runs on the database: a PostgreSQL notification, sent on one of the
 * pool's connections (`pg_notify`: the channel and payload are bound values, not SQL).
 */
export async function sendNotification(db: Db, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
