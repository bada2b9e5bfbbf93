import type { Kysely } from 'kysely';

/** Account center: claims refresh bookkeeping, link attempts bound to a session, audit log, logout-token replay. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('claims_checked_at', 'bigint', (col) => col.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('sign_in_attempts').addColumn('session_id', 'text').execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('time', 'bigint', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('outcome', 'text', (col) => col.notNull())
    .addColumn('actor_user_id', 'text')
    .addColumn('target_user_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('provider_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('details', 'text', (col) => col.notNull().defaultTo('{}'))
    .execute();
  await db.schema.createIndex('audit_events_target_time_idx').on('audit_events').columns(['target_user_id', 'time']).execute();
  await db.schema.createIndex('audit_events_time_idx').on('audit_events').column('time').execute();

  await db.schema
    .createTable('logout_token_jtis')
    .addColumn('provider_id', 'text', (col) => col.notNull())
    .addColumn('jti', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('logout_token_jtis_pk', ['provider_id', 'jti'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('logout_token_jtis').execute();
  await db.schema.dropTable('audit_events').execute();
  await db.schema.alterTable('sign_in_attempts').dropColumn('session_id').execute();
  await db.schema.alterTable('sessions').dropColumn('claims_checked_at').execute();
}
