import type { Kysely } from 'kysely';

/** Audit events about an app (access denials) name it, so the log can be filtered by app. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_events').addColumn('app_id', 'text').execute();
  await db.schema.createIndex('audit_events_type_time_idx').on('audit_events').columns(['type', 'time']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_events_type_time_idx').execute();
  await db.schema.alterTable('audit_events').dropColumn('app_id').execute();
}
