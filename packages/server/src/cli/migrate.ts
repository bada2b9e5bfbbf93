import type { Config } from '../config/schema.js';
import { describeDatabase, openDatabase } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrate.js';

/** `migrate`: the database schema brought up to date. */
export async function migrate(config: Config): Promise<number> {
  // On PostgreSQL several nodes may run this at once: they take turns (storage/migrate.ts).
  let ran: string[];
  try {
    const database = await openDatabase(config, undefined, { migrate: false });
    try {
      ran = await migrateToLatest(database.db);
    } finally {
      await database.close();
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
  console.log(`Database schema is up to date (${describeDatabase(config)})${ran.length > 0 ? `: ran ${ran.join(', ')}` : ''}.`);
  return 0;
}
